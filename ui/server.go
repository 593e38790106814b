// Package ui is arca ui's web page: a local, read-only view of each env's
// records (metadata only, paged and searched over all of them), each
// record's kept versions (numbers, states and times) and recent events,
// the soft-deleted names apart, the vault's health, its recipients and
// the audit trails it is given, merged in time order, each one's chain
// shown. The page and its assets are embedded and
// hold no data; every request for data (/api/...) needs the token in an
// Authorization: Bearer header, which the page takes from the fragment of
// the URL arca ui prints (#token=...) and keeps in its tab's session
// storage. No cookie is set or read: a cookie of 127.0.0.1 would go to
// every server on that host, any port. Only GET and HEAD are served; every
// list, history, check and recipients it runs is the ops layer's, as the
// CLI's: the PDP, the guardrails and the audit are ops' (arca ui gives
// it a service whose events say source ui: the page's own reads). No endpoint can
// return a value: the handlers hold no call that reads one (history and
// list answer versions' and records' metadata only).
package ui

import (
	"context"
	"crypto/subtle"
	"embed"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/internal/webpage"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
)

//go:embed assets
var assets embed.FS

// Vaults is what the page reads of the vaults, through ops: every call is
// audited as the CLI's, and none of them returns a value. A name's
// versions are its history; the deleted names, a list with deleted.
type Vaults interface {
	List(ctx context.Context, req ops.Request) (ops.ListResult, error)
	History(ctx context.Context, req ops.Request) (ops.HistoryResult, error)
	Check(ctx context.Context, req ops.Request) (ops.CheckResult, error)
	Recipients(ctx context.Context, env string) (access.TeamResult, error)
}

// Options configure a Server.
type Options struct {
	Token      string   // required: what every request must carry
	Vaults     Vaults   // required: the service (access.Service)
	Envs       []string // the configured envs, the default first
	AuditFiles []string // the trails the page reads
	Now        func() time.Time
}

// MaxQuery bounds a request's query; the other bounds are webpage's.
// MaxTrails bounds the trails one page reads.
const (
	MaxQuery  = 4 << 10
	MaxTrails = 32
)

// Server is the page's HTTP handler.
type Server struct {
	o       Options
	mux     *http.ServeMux
	indexes []*trail.Index // one for each of o.AuditFiles
}

// New returns the Server of o; o.Token must pass CheckToken.
func New(o Options) (*Server, error) {
	if err := webpage.CheckToken(o.Token); err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	if o.Vaults == nil {
		return nil, fmt.Errorf("ui: Vaults is required")
	}
	if len(o.AuditFiles) > MaxTrails {
		return nil, fmt.Errorf("ui: %d trails: at most %d", len(o.AuditFiles), MaxTrails)
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
	s.mux.HandleFunc("/api/history", s.history)
	s.mux.HandleFunc("/api/record", s.detail)
	s.mux.HandleFunc("/api/deleted", s.deleted)
	s.mux.HandleFunc("/api/health", s.health)
	s.mux.HandleFunc("/api/audit", s.audit)
	return s, nil
}

// HTTPServer is an http.Server for s with webpage's bounds.
func (s *Server) HTTPServer() *http.Server {
	return webpage.NewServer(s)
}

// ServeHTTP checks the method, the request's size and, for data, the
// token; sets the headers every answer carries, and routes. The page and
// its assets are served without the token: they hold no data, and the
// page cannot have it before it runs (a URL's fragment never reaches the
// server).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	webpage.SetHeaders(h)
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		h.Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "arca ui is read-only: GET only"})
		return
	case len(r.URL.RawQuery) > MaxQuery:
		writeJSON(w, http.StatusRequestURITooLong, map[string]string{"error": fmt.Sprintf("the query is longer than %d bytes", MaxQuery)})
		return
	case r.ContentLength > 0 || len(r.TransferEncoding) > 0:
		badRequest(w, "a request has no body")
		return
	}
	if !public(r.URL.Path) && !s.authorized(r) {
		h.Set("WWW-Authenticate", `Bearer realm="arca ui"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "open the URL arca ui printed (it carries the token), or send Authorization: Bearer TOKEN"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// public reports whether path is the page or one of its assets, the same
// bytes for everyone; everything else wants the token.
func public(path string) bool {
	return path == "/" || strings.HasPrefix(path, "/assets/") && path != "/assets/"
}

// authorized reports whether r carries the token in its bearer header
// (the scheme's name in any case, as RFC 9110 has it).
func (s *Server) authorized(r *http.Request) bool {
	scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && s.tokenOK(t)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// page serves the page itself at /, and nothing else: the same bytes to
// everyone, no data in them.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such page: the API is under /api/ (docs/ui.md)"})
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
