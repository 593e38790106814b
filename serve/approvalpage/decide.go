package approvalpage

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// decisionJSON is a decision's body: {"decision":"grant","scope":{"uses":3,
// "ttl_s":0}} or {"decision":"deny"}.
type decisionJSON struct {
	Decision string     `json:"decision"`
	Scope    *scopeJSON `json:"scope"`
}

type scopeJSON struct {
	Uses int `json:"uses"`
	TTL  int `json:"ttl_s"`
}

// keys are the names a decision's body may hold, spelt exactly so.
var keys = map[string]bool{"decision": true, "scope": true, "uses": true, "ttl_s": true}

// decide takes a decision: the token (401), this server's Origin and the
// CSRF token of the data (403), a bounded JSON body (415, 413, 400), an
// approval that is pending (404, 409); then the Store decides, and the
// approval as it now is is the answer.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	if !s.takesPost(w, r, "a decision is JSON: Content-Type: application/json") {
		return
	}
	d, status, err := readDecision(w, r)
	if err != nil {
		fail(w, status, err.Error())
		return
	}
	id := r.PathValue("id")
	v, ok := s.view(w, id)
	if !ok {
		return
	}
	if v.State != "pending" {
		fail(w, http.StatusConflict, notPending(v))
		return
	}
	if err := s.o.Store.Decide(id, d); err != nil {
		fail(w, http.StatusConflict, err.Error())
		return
	}
	if v, ok = s.view(w, id); ok {
		writeJSON(w, http.StatusOK, map[string]any{"approval": wire(v)})
	}
}

// takesPost answers whether r may post to the page: it carries the token
// (else 401), this server's Origin and the CSRF token (else 403), and a
// JSON body (else 415, notJSON saying what is expected). When it may not,
// it has answered.
func (s *Server) takesPost(w http.ResponseWriter, r *http.Request, notJSON string) bool {
	token, ok := s.authorized(w, r, "")
	if !ok {
		return false
	}
	if msg := s.checkOrigin(r, token); msg != "" {
		fail(w, http.StatusForbidden, msg)
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		fail(w, http.StatusUnsupportedMediaType, notJSON)
		return false
	}
	return true
}

// checkOrigin says why r may not decide (or send a value), or "" when it may: its Origin is
// this server's own, and it carries the CSRF token of its bearer token.
func (s *Server) checkOrigin(r *http.Request, token string) string {
	origin := r.Header.Get("Origin")
	switch {
	case origin == "":
		return "a decision or a value needs an Origin header: it is taken from this page only"
	case origin != "http://"+r.Host:
		return "a decision or a value is taken from this page only: the Origin is another site's"
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		return "a decision or a value needs the CSRF token this page reads with the approval or the request (" + CSRFHeader + ")"
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf(token))) != 1 {
		return "the CSRF token is not this page's: load the page again"
	}
	return ""
}

// readDecision reads r's body, at most MaxBody bytes, as a decision: the
// keys exact (no other case, none twice, no other), the decision grant
// with a scope in bounds, or deny with none.
func readDecision(w http.ResponseWriter, r *http.Request) (Decision, int, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return Decision{}, http.StatusRequestEntityTooLarge, fmt.Errorf("a decision is at most %d bytes", MaxBody)
	}
	if err != nil {
		return Decision{}, http.StatusBadRequest, fmt.Errorf("reading the decision: %v", err)
	}
	var body decisionJSON
	if err := exactKeys(b); err != nil {
		return Decision{}, http.StatusBadRequest, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return Decision{}, http.StatusBadRequest, fmt.Errorf("the decision is not JSON of this page's: %v", err)
	}
	if dec.More() {
		return Decision{}, http.StatusBadRequest, errors.New("the decision is followed by more")
	}
	d, err := body.decision()
	if err != nil {
		return Decision{}, http.StatusBadRequest, err
	}
	return d, 0, nil
}

func (b decisionJSON) decision() (Decision, error) {
	switch {
	case b.Decision == "deny" && b.Scope == nil:
		return Decision{}, nil
	case b.Decision == "deny":
		return Decision{}, errors.New("a deny has no scope")
	case b.Decision != "grant":
		return Decision{}, errors.New(`the decision is "grant" or "deny"`)
	case b.Scope == nil:
		return Decision{}, errors.New("a grant needs a scope: {\"uses\":N,\"ttl_s\":S}, 0 for no bound")
	case b.Scope.Uses < 0 || b.Scope.Uses > MaxUses:
		return Decision{}, fmt.Errorf("a scope's uses are 1 to %d (0: no bound)", MaxUses)
	case b.Scope.TTL < 0 || b.Scope.TTL > MaxTTL:
		return Decision{}, fmt.Errorf("a scope's ttl_s is 1 to %d (0: no bound)", MaxTTL)
	}
	return Decision{Grant: true, Scope: Scope{Uses: b.Scope.Uses, TTLSeconds: b.Scope.TTL}}, nil
}

// exactKeys refuses a JSON text whose objects hold a key twice, or a key
// that is not one of keys spelt exactly (encoding/json would take
// "Decision" for "decision", and the last of two).
func exactKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := walk(dec, 0); err != nil {
		return fmt.Errorf("the decision is not JSON of this page's: %v", err)
	}
	return nil
}

// walk reads one JSON value from dec, checking the keys of its objects.
func walk(dec *json.Decoder, depth int) error {
	if depth > 4 {
		return errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		if delim == '{' {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if !keys[key] || seen[key] {
				return fmt.Errorf("the key %q is unknown or given twice", key)
			}
			seen[key] = true
		}
		if err := walk(dec, depth+1); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}
