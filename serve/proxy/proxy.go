// Package proxy is a serve session's loopback reverse proxy (SPEC §13): one
// base URL per service, http://127.0.0.1:PORT/NAME, for tools that take a
// base URL and a credential (LLM SDKs, git over HTTPS, REST clients). The
// tool is given the session's token in place of the credential; the proxy
// takes it out, has ops decide the request as an http op (its event's via
// "proxy"), and ops sends it upstream with the real credential. The answer
// streams back through the scrub engine, against the credential and every
// value the session released.
//
// What it holds to:
//
//   - It listens on 127.0.0.1 only, on a port of the system's choosing.
//   - A request must carry the token where its service's credential would
//     go (auth bearer: "Authorization: Bearer TOKEN"; basic: the password,
//     any user; header: the service's header; query: its query
//     parameter), compared in constant time; else it is answered 401 and
//     never decided (its event: code denied). A token lives 8 hours;
//     issuing a new one (a later proxy op) ends the one before.
//   - The token's carrier, the hop-by-hop headers, Host, Content-Length,
//     Expect and Accept-Encoding are taken out before ops sees the request
//     (upstream is asked for the identity encoding, so that what comes
//     back can be scrubbed); a body is read whole, at most manifest.MaxBody
//     bytes (else 413), within a minute.
//   - An answer's header values are scrubbed as its body is, and a header
//     whose name holds a value (a credential in any case: net/http changed
//     the case of the name) is left out. An answer in
//     an encoding other than identity (upstream was asked for identity)
//     is not passed on: scrub could not read it (502, upstream_failed).
//   - At most manifest.MaxUses requests are decided and sent at once; the
//     others wait, for as long as their client does. An answer is written
//     within the service's timeout_ms: a client that stops reading holds
//     its slot no longer.
//   - A body cut at the service's max_response_bytes ends with the scrub
//     stream cut (the bytes it held back dropped) and the connection
//     aborted, so the client sees a response that did not end rather than
//     a shorter one. An upstream that fails mid-body is cut the same way.
//   - Close stops accepting, cancels the requests in flight and waits for
//     each to have written its event.
package proxy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
)

// TokenLife is how long a token is valid after it was issued.
const TokenLife = 8 * time.Hour

// bufSize is the most of an answer read from upstream at once.
const bufSize = 32 << 10

// Options are what a proxy works with, for the life of its session.
type Options struct {
	Service  *ops.Service              // decides, sends and audits every request
	Services map[string]config.Service // the configured services, by name
	Scrub    *scrub.Set                // the session's values; nil: a set of the proxy's own
	Now      func() time.Time          // time.Now when nil
}

// Grant is what a token opens: the services it reaches, and the env and
// actor its requests are decided with.
type Grant struct {
	Services   []string
	Env, Actor string
}

// Proxy is one session's proxy. Its methods are safe for concurrent use.
type Proxy struct {
	o      Options
	ln     net.Listener
	srv    *http.Server
	base   string // http://127.0.0.1:PORT
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{} // one per request being decided or sent
	onWait func()        // a test's: called as a request starts waiting for a slot
	bufs   sync.Pool     // *[]byte of bufSize: what an answer is copied through
	served chan struct{} // closed when the server's loop has returned

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	token    string
	expires  time.Time
	grant    Grant // Services sorted, each once
}

// Start listens on 127.0.0.1:0 and serves g's services under a fresh
// token. A service g names that is not configured is an error.
func Start(o Options, g Grant) (*Proxy, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Scrub == nil {
		o.Scrub = scrub.NewSet()
	}
	p := &Proxy{o: o, slots: make(chan struct{}, manifest.MaxUses), served: make(chan struct{})}
	p.bufs.New = func() any { b := make([]byte, bufSize); return &b }
	if err := p.Issue(g); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: listen on loopback: %w", err)
	}
	p.ln, p.base = ln, "http://"+ln.Addr().String()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		ErrorLog:          discardLog(),
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // returns once Close closes the listener
	}()
	return p, nil
}

// Issue makes a fresh token for the services the proxy already serves and
// g's, decided from now on with g's env and actor; the token before it
// is no longer valid. A service that is not configured is an error, and
// changes nothing.
func (p *Proxy) Issue(g Grant) error {
	for _, name := range g.Services {
		if _, ok := p.o.Services[name]; !ok {
			return fmt.Errorf("unknown service %q", name)
		}
	}
	tok, err := newToken()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	names := append(slices.Clone(p.grant.Services), g.Services...)
	slices.Sort(names)
	g.Services = slices.Compact(names)
	p.grant, p.token, p.expires = g, tok, p.o.Now().Add(TokenLife)
	return nil
}

// newToken returns 32 random bytes, base64url without padding.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errors.New("proxy: no randomness for a token")
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// BaseURLs returns the base URL of each service served, by name.
func (p *Proxy) BaseURLs() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	urls := make(map[string]string, len(p.grant.Services))
	for _, name := range p.grant.Services {
		urls[name] = p.base + "/" + name
	}
	return urls
}

// Token returns the current token.
func (p *Proxy) Token() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.token
}

// ExpiresAt returns when the current token stops being valid.
func (p *Proxy) ExpiresAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.expires
}

// Close stops accepting connections, cancels the requests in flight and
// returns once every one of them has returned, its event written. Later
// calls do nothing.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	_ = p.srv.Close()
	p.inflight.Wait()
	<-p.served
}

// enter counts a request in, unless the proxy is closing: then it reports
// false.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.inflight.Add(1)
	return true
}

// grantFor returns the token, whether it is still valid, and the grant,
// when the proxy serves service name.
func (p *Proxy) grantFor(name string) (token string, valid bool, g Grant, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.grant.Services, name) {
		return "", false, Grant{}, false
	}
	return p.token, p.o.Now().Before(p.expires), p.grant, true
}
