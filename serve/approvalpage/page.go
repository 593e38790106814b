// Package approvalpage is the loopback web page on which a human decides
// the pending approvals of one arca serve session (SPEC §14): for each, the
// summary, the PDP's reason, the fingerprint and when it expires, a scope
// chooser (once, N uses, T minutes, this session), Approve and Deny. It
// never holds a value: a View has none to show.
//
// The URL alone approves nothing. Every answer that holds data, and every
// decision, needs the approver's token in an Authorization: Bearer
// header; the token never travels in a URL and no cookie is set or read
// (a cookie of 127.0.0.1 would go to every server on that host, any
// port). Opened in a browser, an approval's URL answers 401 with a page
// that holds no data: its script (from /assets/, the page's own origin,
// under a CSP with nothing inline) asks the human for the token, keeps it
// in the tab's session storage, reads the same URL again with the token,
// and puts what it reads into the page as text, never as markup.
//
// Started with Requests (arca mcp's), the page also lists the secret
// requests of the session at /requests/ and takes, at a request's URL,
// the value a human types for it, under the same rules as a decision; the
// value goes in the POST's body alone and its answer holds the version
// stored, never the value (requests.go).
//
// A decision is a POST of JSON to the approval's URL, and needs, beside
// the token, an Origin header that is this server's own origin and the
// CSRF token the data came with (an HMAC, under a key made at Start, of
// the bearer token, compared in constant time): a page of another origin
// can neither send that Origin nor read the CSRF token. The Host must be
// a loopback name of this server's port (no DNS rebinding). Bounds:
//
//	MaxBody       4 KiB   a decision's body
//	MaxValueBody  ~384 KiB  a value's body (a value: manifest.MaxValue)
//	MaxUses       10000   the uses an approval may grant
//	MaxTTL        86400   the seconds an approval may grant
//	MaxTokenFile  4 KiB   the approver's token file
//	webpage's bounds on a request's header and its times
package approvalpage

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/arca-secrets/arca/internal/webpage"
)

//go:embed assets
var assets embed.FS

// Bounds on a decision.
const (
	MaxBody = 4 << 10
	MaxUses = 10000
	MaxTTL  = 86400
)

// View is one approval as the page shows it. It never holds a secret value.
type View struct {
	ID          string    // "ap_" + 32 hex
	State       string    // pending | approved | denied | expired
	Summary     string    // e.g. `agent-7 asks to put prod/db/password` (untrusted text: shown as text)
	Reason      string    // the PDP's reason, may be "" (untrusted text)
	Fingerprint string    // hex SHA-256
	ExpiresAt   time.Time // when a pending one expires
}

// Scope is what an approval grants: at most Uses uses, for at most
// TTLSeconds; 0 is unbounded in that dimension, both 0 is "this session".
// The page's chooser offers: once (Uses 1), N uses (1..MaxUses), T minutes
// (1..MaxTTL/60), this session.
type Scope struct{ Uses, TTLSeconds int }

// Decision is what the human chose: Grant false denies (Scope is then
// zero).
type Decision struct {
	Grant bool
	Scope Scope
}

// Store is the session's approvals. Its methods are called from
// concurrent requests. Decide's error text is shown to the human (as
// text); deciding one that is not pending fails.
type Store interface {
	Pending() []View
	View(id string) (View, bool)
	Decide(id string, d Decision) error
}

// Options configure a Server.
type Options struct {
	Listen string // HOST:PORT, HOST a loopback IP address or localhost
	Token  string // the approver's token (LoadToken)
	Store  Store
	// Requests, when set, are the secret requests the page lists at
	// /requests/ and takes values for (requests.go); nil: none.
	Requests Requests
}

// Server is the running page.
type Server struct {
	o       Options
	csrfKey []byte
	origin  string // http://HOST:PORT of the listener
	port    string
	http    *http.Server
	served  chan error // Serve's return, once

	closeOnce sync.Once
	closeErr  error
}

// Start listens on o.Listen and serves the page until Close. It refuses a
// Listen that is not loopback, a token that does not pass LoadToken's
// rules, and no Store.
func Start(o Options) (*Server, error) {
	if err := checkToken(o.Token); err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	if o.Store == nil {
		return nil, errors.New("approval page: no store of approvals")
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("approval page: listen %q: %v", o.Listen, err)
	}
	if !webpage.Loopback(host) {
		return nil, fmt.Errorf("approval page: listen %q: the host must be a loopback IP address (127.0.0.1, ::1) or localhost", o.Listen)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("approval page: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() { // localhost that a hosts file names otherwise
		ln.Close()
		return nil, fmt.Errorf("approval page: listen %q: it is %s, not a loopback address", o.Listen, addr.IP)
	}
	s := &Server{o: o, csrfKey: make([]byte, 32), served: make(chan error, 1), port: strconv.Itoa(addr.Port)}
	_, _ = rand.Read(s.csrfKey)
	s.origin = "http://" + net.JoinHostPort(addr.IP.String(), s.port)
	s.http = webpage.NewServer(s.routes())
	// No log: serve's stderr carries only its audit wire.
	s.http.ErrorLog = log.New(io.Discard, "", 0)
	go func() { s.served <- s.http.Serve(ln) }()
	return s, nil
}

// URL is the page of the approval id.
func (s *Server) URL(id string) string {
	return s.origin + "/approvals/" + url.PathEscape(id)
}

// ListURL is the page of the pending approvals.
func (s *Server) ListURL() string {
	return s.origin + "/approvals/"
}

// Close stops listening and waits for the answers under way (at most
// webpage.WriteTimeout), then closes every connection. A second Close
// returns what the first did.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), webpage.WriteTimeout)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("approval page: %w", err)
	}
	return nil
}
