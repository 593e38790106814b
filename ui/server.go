// Package ui is arca ui's web page: a local, read-only view of each env's
// records (metadata only), the vault's health, its recipients and the
// audit trail. The page and its assets are embedded; every request needs
// the token (a cookie the page gets from the URL arca ui prints, or an
// Authorization: Bearer header); only GET and HEAD are served; every list,
// check and recipients it runs goes through ops and is audited as the
// CLI's. No endpoint can return a value: the handlers hold no call that
// reads one.
package ui

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
)

//go:embed assets
var assets embed.FS

// Vaults is what the page reads of the vaults, through ops: every call is
// audited as the CLI's, and none of them returns a value.
type Vaults interface {
	List(ctx context.Context, req ops.Request) (ops.ListResult, error)
	Check(ctx context.Context, req ops.Request) (ops.CheckResult, error)
	Recipients(ctx context.Context, env string) (access.TeamResult, error)
}

// Options configure a Server.
type Options struct {
	Token      string   // required: what every request must carry
	Vaults     Vaults   // the service
	Envs       []string // the configured envs, the default first
	AuditFiles []string // the trails the page reads
	Now        func() time.Time
}

// CookieName is the cookie that carries the token once the page opened.
const CookieName = "arca_ui"

// Bounds on what a request may be and take.
const (
	MaxHeaderBytes = 16 << 10
	MaxQuery       = 4 << 10
	ReadTimeout    = 10 * time.Second
	WriteTimeout   = 30 * time.Second
	IdleTimeout    = 60 * time.Second
)

// CSP is the page's Content-Security-Policy: its own script and style,
// nothing inline, nothing from anywhere else, no frames, no forms.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Server is the page's HTTP handler.
type Server struct {
	o       Options
	mux     *http.ServeMux
	indexes []*trail.Index // one for each of o.AuditFiles
}

// New returns the Server of o; o.Token must not be empty.
func New(o Options) (*Server, error) {
	if o.Token == "" {
		return nil, errors.New("ui: a token is required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Server{o: o, mux: http.NewServeMux()}
	for _, p := range o.AuditFiles {
		s.indexes = append(s.indexes, trail.NewIndex(p))
	}
	s.mux.HandleFunc("/", s.page)
	s.mux.Handle("/assets/", http.FileServerFS(assets))
	s.mux.HandleFunc("/api/envs", s.envs)
	s.mux.HandleFunc("/api/records", s.records)
	s.mux.HandleFunc("/api/health", s.health)
	s.mux.HandleFunc("/api/audit", s.audit)
	return s, nil
}

// HTTPServer is an http.Server for s with the bounds above.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: ReadTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// ServeHTTP checks the method, the request's size and the token, sets the
// headers every answer carries, and routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "arca ui is read-only: GET only", http.StatusMethodNotAllowed)
		return
	case len(r.URL.RawQuery) > MaxQuery:
		http.Error(w, "query too long", http.StatusRequestURITooLong)
		return
	case r.ContentLength > 0 || len(r.TransferEncoding) > 0:
		http.Error(w, "a request has no body", http.StatusBadRequest)
		return
	}
	if t := r.URL.Query().Get("token"); t != "" && r.URL.Path == "/" {
		s.login(w, r, t)
		return
	}
	if !s.authorized(r) {
		h.Set("WWW-Authenticate", `Bearer realm="arca ui"`)
		http.Error(w, "open the URL arca ui printed (it carries the token), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// login takes the token from the URL arca ui printed: right, it becomes
// the session's cookie and the page is reloaded without it, so the token
// does not stay in the address bar or the history.
func (s *Server) login(w http.ResponseWriter, r *http.Request, token string) {
	if !s.tokenOK(token) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// authorized reports whether r carries the token: its cookie or a bearer
// header.
func (s *Server) authorized(r *http.Request) bool {
	if c, err := r.Cookie(CookieName); err == nil && s.tokenOK(c.Value) {
		return true
	}
	a := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(a, "Bearer "); ok {
		return s.tokenOK(t)
	}
	return false
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// page serves the page itself at /, and nothing else.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "the page is missing from this build", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}
