package approvalpage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// MaxValueBody bounds the body of a POST of a value: a value of
// manifest.MaxValue bytes, each of them escaped as JSON escapes a control
// character (six bytes), and the object around it. The value itself is
// at most manifest.MaxValue bytes.
const MaxValueBody = 6*manifest.MaxValue + 64

// RequestView is one secret request as the page shows it: an agent asked
// for a secret nobody stored, and a human may type it here. It never
// holds the value.
type RequestView struct {
	ID          string    // "rq_" + 32 hex
	State       string    // pending | stored | expired
	Ref         string    // the ref asked for, unpinned: arca://ns/name
	Env         string    // the env it is stored in
	Description string    // why the agent asks (untrusted text: shown as text)
	Actor       string    // the actor the asking session claims, may be ""
	Client      string    // the name the asking client gave, may be ""
	Version     uint64    // the version stored, once stored
	ExpiresAt   time.Time // when a pending one expires
}

// Requests is a session's secret requests, which a page started with
// them lists and fulfils. Its methods are called from concurrent
// requests. Fulfil stores value for the request id as a put would
// (guardrails, the PDP, the audit trail) and returns the request as it
// then is; its error text is shown to the human (as text) and never holds
// the value.
type Requests interface {
	PendingRequests() []RequestView
	Request(id string) (RequestView, bool)
	Fulfil(ctx context.Context, id string, value vault.Secret) (RequestView, error)
}

// requestShell is the page a browser that has not sent the token is
// answered for a secret request.
const requestShell = "assets/request.html"

// validRequestID is the form of a secret request's id.
var validRequestID = regexp.MustCompile(`^rq_[0-9a-f]{32}$`)

// RequestURL is the page of the secret request id.
func (s *Server) RequestURL(id string) string {
	return s.origin + "/requests/" + id
}

// requestRoutes adds the routes of secret requests to mux, when the page
// has them.
func (s *Server) requestRoutes(mux *http.ServeMux) {
	if s.o.Requests == nil {
		return
	}
	mux.HandleFunc("GET /requests/{$}", s.listRequests)
	mux.HandleFunc("GET /requests/{id}", s.oneRequest)
	mux.HandleFunc("POST /requests/{id}", s.fulfil)
}

// requestJSON is a RequestView on the wire.
type requestJSON struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	Ref         string `json:"ref"`
	Env         string `json:"env"`
	Description string `json:"description"`
	Actor       string `json:"actor"`
	Client      string `json:"client"`
	Version     uint64 `json:"version,omitempty"`
	ExpiresAt   string `json:"expires_at"`
}

func wireRequest(v RequestView) requestJSON {
	return requestJSON{ID: v.ID, State: v.State, Ref: v.Ref, Env: v.Env, Description: v.Description, Actor: v.Actor,
		Client: v.Client, Version: v.Version, ExpiresAt: v.ExpiresAt.UTC().Format(time.RFC3339)}
}

// listRequests answers the pending secret requests.
func (s *Server) listRequests(w http.ResponseWriter, r *http.Request) {
	token, ok := s.authorized(w, r, requestShell)
	if !ok {
		return
	}
	vs := []requestJSON{}
	for _, v := range s.o.Requests.PendingRequests() {
		vs = append(vs, wireRequest(v))
	}
	writeJSON(w, http.StatusOK, map[string]any{"requests": vs, "csrf": s.csrf(token)})
}

// oneRequest answers one secret request.
func (s *Server) oneRequest(w http.ResponseWriter, r *http.Request) {
	token, ok := s.authorized(w, r, requestShell)
	if !ok {
		return
	}
	if v, ok := s.request(w, r.PathValue("id")); ok {
		writeJSON(w, http.StatusOK, map[string]any{"request": wireRequest(v), "csrf": s.csrf(token)})
	}
}

// request finds the secret request id, or answers 404.
func (s *Server) request(w http.ResponseWriter, id string) (RequestView, bool) {
	if validRequestID.MatchString(id) {
		if v, ok := s.o.Requests.Request(id); ok {
			return v, true
		}
	}
	fail(w, http.StatusNotFound, "no such secret request in this session")
	return RequestView{}, false
}

// fulfil takes a value for a secret request: the token (401), this
// server's Origin and the CSRF token (403), a bounded JSON body holding
// the value (415, 413, 400), a request that is pending (404, 409); then
// Requests stores it, and the request as it now is (its version, never
// the value) is the answer. A refusal is 409 with its reason; the request
// stays as Requests leaves it.
func (s *Server) fulfil(w http.ResponseWriter, r *http.Request) {
	if !s.takesPost(w, r, `a value is sent as JSON: Content-Type: application/json, {"value": "..."}`) {
		return
	}
	value, status, err := readValue(w, r)
	if err != nil {
		fail(w, status, err.Error())
		return
	}
	id := r.PathValue("id")
	v, ok := s.request(w, id)
	if !ok {
		return
	}
	if v.State != "pending" {
		fail(w, http.StatusConflict, "this request is "+v.State+": nothing more is stored for it")
		return
	}
	v, err = s.o.Requests.Fulfil(r.Context(), id, value)
	if err != nil {
		fail(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"request": wireRequest(v)})
}

// readValue reads r's body, at most MaxValueBody bytes, as {"value":
// "..."}: the one key spelt exactly so, once; the value a string of
// UTF-8 (no escaped lone surrogate, which JSON decoding would turn into
// U+FFFD), 1 to manifest.MaxValue bytes. Its errors never hold the value.
func readValue(w http.ResponseWriter, r *http.Request) (vault.Secret, int, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxValueBody))
	defer clear(b)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return vault.Secret{}, http.StatusRequestEntityTooLarge, fmt.Errorf("a value is at most %d bytes", manifest.MaxValue)
	}
	if err != nil {
		return vault.Secret{}, http.StatusBadRequest, errors.New("the value could not be read")
	}
	if !utf8.Valid(b) {
		return vault.Secret{}, http.StatusBadRequest, errors.New("the value is not UTF-8")
	}
	value, err := valueOf(b)
	if err != nil {
		return vault.Secret{}, http.StatusBadRequest, err
	}
	switch {
	case len(value) == 0:
		return vault.Secret{}, http.StatusBadRequest, errors.New("the value is empty: type the secret")
	case len(value) > manifest.MaxValue:
		return vault.Secret{}, http.StatusRequestEntityTooLarge, fmt.Errorf("a value is at most %d bytes", manifest.MaxValue)
	case strings.Count(value, "\uFFFD") > bytes.Count(b, []byte("\uFFFD"))+countFold(b, `\ufffd`):
		return vault.Secret{}, http.StatusBadRequest, errors.New("the value is not UTF-8: it holds an unpaired surrogate")
	}
	return vault.NewSecret([]byte(value)), 0, nil
}

// valueOf decodes b as {"value": "..."} and nothing else.
func valueOf(b []byte) (string, error) {
	bad := errors.New(`the body is not {"value": "..."}`)
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", bad
	}
	var value string
	var seen bool
	for dec.More() {
		k, err := dec.Token()
		if err != nil || k != "value" || seen {
			return "", bad
		}
		seen = true
		if tok, err := dec.Token(); err != nil {
			return "", bad
		} else if value, seen = tok.(string); !seen {
			return "", errors.New("the value must be a JSON string")
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') || !seen {
		return "", bad
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", bad
	}
	return value, nil
}

// countFold counts the occurrences of the ASCII text sub in b, in any
// case.
func countFold(b []byte, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(sub)], []byte(sub)) {
			n++
		}
	}
	return n
}
