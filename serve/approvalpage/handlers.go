package approvalpage

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/arca-secrets/arca/internal/webpage"
)

// CSRFHeader is the header a decision carries its CSRF token in.
const CSRFHeader = "X-Arca-CSRF"

// validID is the form of an approval's id.
var validID = regexp.MustCompile(`^ap_[0-9a-f]{32}$`)

// routes is the page's handler: the headers every answer carries, the
// Host checked, then the routes. A method a route does not take is 405
// with Allow (http.ServeMux's), a path none has is 404.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/approvals/", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /approvals/{$}", s.list)
	mux.HandleFunc("GET /approvals/{id}", s.one)
	mux.HandleFunc("POST /approvals/{id}", s.decide)
	mux.HandleFunc("GET /assets/{name}", asset)
	s.requestRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		webpage.SetHeaders(w.Header())
		if !s.ownHost(r.Host) {
			fail(w, http.StatusMisdirectedRequest, "this page answers only at "+s.origin)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// ownHost reports whether host names this server: a loopback name and
// its port (a page of a name rebound to 127.0.0.1 is refused).
func (s *Server) ownHost(host string) bool {
	h, port, err := net.SplitHostPort(host)
	return err == nil && port == s.port && webpage.Loopback(h)
}

// authorized answers whether r carries the token in its bearer header (the
// scheme's name in any case, as RFC 9110 has it); when it does not, it has
// answered 401: with shell, the page (an asset's name) that asks for the
// token, when r carries no Authorization header and shell is set (a
// browser's navigation), else with JSON.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, shell string) (token string, ok bool) {
	auth := r.Header.Get("Authorization")
	scheme, t, found := strings.Cut(auth, " ")
	if found && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1 {
		return t, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="arca approvals"`)
	if auth == "" && shell != "" {
		page(w, shell)
		return "", false
	}
	fail(w, http.StatusUnauthorized, "the approver's token is needed: send Authorization: Bearer TOKEN")
	return "", false
}

// csrf is the CSRF token of a bearer token.
func (s *Server) csrf(token string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// approvalShell is the page a browser that has not sent the token is
// answered for an approval.
const approvalShell = "assets/approvals.html"

// page answers 401 with the page name that asks for the token: the same
// bytes to everyone, no data in them.
func page(w http.ResponseWriter, name string) {
	b, err := assets.ReadFile(name)
	if err != nil {
		fail(w, http.StatusInternalServerError, "the page is missing from this build")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write(b)
}

// asset serves a file of the page's script and style.
func asset(w http.ResponseWriter, r *http.Request) {
	name := "assets/" + r.PathValue("name")
	if st, err := fs.Stat(assets, name); err != nil || !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	http.ServeFileFS(w, r, assets, name)
}

// viewJSON is a View on the wire.
type viewJSON struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	Summary     string `json:"summary"`
	Reason      string `json:"reason"`
	Fingerprint string `json:"fingerprint"`
	ExpiresAt   string `json:"expires_at"`
}

func wire(v View) viewJSON {
	return viewJSON{ID: v.ID, State: v.State, Summary: v.Summary, Reason: v.Reason, Fingerprint: v.Fingerprint,
		ExpiresAt: v.ExpiresAt.UTC().Format(time.RFC3339)}
}

// list answers the pending approvals.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	token, ok := s.authorized(w, r, approvalShell)
	if !ok {
		return
	}
	vs := []viewJSON{}
	for _, v := range s.o.Store.Pending() {
		vs = append(vs, wire(v))
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": vs, "csrf": s.csrf(token)})
}

// one answers one approval.
func (s *Server) one(w http.ResponseWriter, r *http.Request) {
	token, ok := s.authorized(w, r, approvalShell)
	if !ok {
		return
	}
	v, ok := s.view(w, r.PathValue("id"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approval": wire(v), "csrf": s.csrf(token)})
}

// view finds the approval id, or answers 404.
func (s *Server) view(w http.ResponseWriter, id string) (View, bool) {
	if validID.MatchString(id) {
		if v, ok := s.o.Store.View(id); ok {
			return v, true
		}
	}
	fail(w, http.StatusNotFound, "no such approval in this session")
	return View{}, false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers status with {"error": msg}.
func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// notPending is the message of a decision on a decided approval.
func notPending(v View) string {
	if v.State == "expired" {
		return "this approval expired: nothing was decided; the request must be made again"
	}
	return "this approval is already " + v.State + ": it is decided once"
}
