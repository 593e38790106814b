// Package upstream makes one HTTP request to a configured service on a
// caller's behalf, injecting a credential the caller never sees (SPEC §13).
// It builds the request from the service's config and the caller's Call,
// guards the network, and returns the raw outcome; deciding, auditing and
// scrubbing are the ops layer's.
//
// What it holds to:
//
//   - The destination is the service's base_url, never the request: a Call
//     names a method, a path under the base URL's path, a query, headers
//     and a body, and Check refuses whatever would carry credentials or
//     routing (Authorization, the service's auth header, Cookie, Host,
//     Proxy-*, hop-by-hop headers, Content-Length, the auth query
//     parameter).
//   - The path is decoded once and must be clean: no "..", no "//", no
//     encoded "/" or "\", nothing path.Clean would change (so "/repos/x/",
//     with its trailing slash, is denied; only "/" itself ends in one), and
//     it must match one of the service's path globs.
//   - The host is resolved here, every address is checked (loopback,
//     private, link-local and cloud metadata, unspecified, multicast,
//     CGNAT and reserved ranges, in any IPv4-mapped form, are refused
//     unless allow_private), and the address checked is the address
//     dialled: there is no second lookup.
//   - The credential goes only to the base URL's origin. Redirects are
//     returned as they are (follow_redirects "none"), or followed at most
//     maxRedirects times when they stay on the origin and pass the path
//     rules ("same-origin"); any other is a Failure of cause "redirect",
//     and the other origin sees nothing.
//   - Upstream is asked for the identity encoding (a caller's
//     Accept-Encoding is replaced), so the bytes returned are the bytes
//     sent and can be scrubbed; a body is read up to
//     max_response_bytes and never buffered past it; the whole exchange
//     is bounded by timeout_ms.
//   - Errors never carry a header value, a query, a body or the
//     credential: a Refusal names the header, parameter, method or path;
//     a Failure names the host and port and what happened.
package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/vault/secret"
)

// The bounds of a Call and of an exchange.
const (
	maxHeaders      = 64       // header values a Call may carry
	maxHeaderBytes  = 8 << 10  // their names and values together
	maxQueryKeys    = 64       // query parameters a Call may carry
	maxRedirects    = 5        // same-origin redirects followed
	maxRespHeader   = 64 << 10 // a response's header block
	maxIdlePerHost  = 16       // kept-alive connections to the service
	idleConnTimeout = 90 * time.Second
)

// Credential is what gets injected: the secret, and for auth basic the
// user name. A secret.Secret (vault.Secret) never prints.
type Credential struct {
	User, Secret secret.Secret
}

// Call is a request as the caller asks for it.
type Call struct {
	Method string
	Path   string // as sent (percent-encoded), relative to base_url's path
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Response is the outcome of Do: the status, the safe headers (see
// SafeHeader), the body up to max_response_bytes, and the byte counts an
// audit event records.
type Response struct {
	Status    int
	Header    http.Header
	Body      []byte
	Truncated bool  // the body went on past max_response_bytes
	BytesIn   int64 // request body bytes sent
	BytesOut  int64 // response body bytes read
}

// Service is the client of one configured service. It is safe for
// concurrent use; its connections are kept alive between calls.
type Service struct {
	name     string
	cfg      config.Service
	base     *url.URL
	host     string // the base URL's host name, the TLS server name
	addr     string // host:port, the only address requests go to
	basePath string // the base URL's escaped path, without a trailing "/"
	timeout  time.Duration
	max      int64 // max_response_bytes
	tls      *tls.Config
	lookup   resolver
	dialer   net.Dialer
	client   *http.Client
}

// New builds the client of service name: its base URL parsed, its TLS
// roots (the system pool, plus the tls_ca PEM file when set), and a
// transport whose dialer checks every address it resolves, keep-alive on,
// HTTP/2 allowed, no proxy from the environment.
func New(name string, cfg config.Service) (*Service, error) {
	base, err := parseBase(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	if err := checkAuth(cfg); err != nil {
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	roots, err := rootsOf(cfg.TLSCA)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	s := &Service{
		name:     name,
		cfg:      cfg,
		base:     base,
		host:     base.Hostname(),
		addr:     net.JoinHostPort(base.Hostname(), portOf(base)),
		basePath: strings.TrimSuffix(base.EscapedPath(), "/"),
		timeout:  time.Duration(orDefault(cfg.TimeoutMS, config.DefaultServiceTimeoutMS)) * time.Millisecond,
		max:      int64(orDefault(cfg.MaxResponseBytes, config.DefaultMaxResponseBytes)),
		lookup:   &net.Resolver{},
	}
	if len(s.cfg.Methods) == 0 {
		s.cfg.Methods = []string{http.MethodGet}
	}
	s.tls = &tls.Config{RootCAs: roots, ServerName: s.host, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12}
	s.client = &http.Client{Transport: s.transport(), CheckRedirect: s.checkRedirect}
	return s, nil
}

// Close closes the service's idle connections.
func (s *Service) Close() { s.client.CloseIdleConnections() }

// transport is the service's one transport: every connection is dialled by
// s.dial (and, for https, handshaken by s.dialTLS), compression is off so
// that Accept-Encoding stays identity, and nothing comes from the
// environment.
func (s *Service) transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            s.dial,
		DialTLSContext:         s.dialTLS,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true,
		MaxIdleConns:           maxIdlePerHost,
		MaxIdleConnsPerHost:    maxIdlePerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxRespHeader,
	}
}

// parseBase parses a base URL: https, or http to a loopback host, with a
// host and nothing after the path.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("base_url is not a URL")
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.Opaque != "":
		return nil, errors.New("base_url must be an https URL with a host")
	case u.User != nil, u.RawQuery != "", u.ForceQuery, u.Fragment != "":
		return nil, errors.New("base_url must not carry a user, a query or a fragment")
	case strings.ContainsFunc(u.Host, func(r rune) bool { return r >= utf8.RuneSelf }):
		return nil, errors.New("base_url's host must be written in ASCII (its punycode form)")
	case u.Scheme == "http" && !loopbackName(u.Hostname()):
		return nil, errors.New("base_url may be http only to a loopback host")
	}
	return u, nil
}

// checkAuth checks the auth kind names where the credential goes.
func checkAuth(cfg config.Service) error {
	switch cfg.Auth {
	case "bearer", "basic":
	case "header":
		if cfg.Header == "" || !validHeaderName(cfg.Header) {
			return errors.New("auth header needs a valid header name")
		}
	case "query":
		if cfg.QueryParam == "" {
			return errors.New("auth query needs query_param")
		}
	default:
		return fmt.Errorf("auth %q is not bearer, basic, header or query", cfg.Auth)
	}
	return nil
}

// rootsOf is the system's roots plus those of the PEM file caFile, if any.
func rootsOf(caFile string) (*x509.CertPool, error) {
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if caFile == "" {
		return roots, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("tls_ca: %w", err)
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls_ca %s: no PEM certificate in it", caFile)
	}
	return roots, nil
}

// portOf is u's port, or its scheme's.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// orDefault is n, or def when n is unset (zero).
func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
