package approvalpage

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "approver-token-0123456789abcdef"

// Ids of the fake store's approvals.
const (
	idPending = "ap_00000000000000000000000000000001"
	idOther   = "ap_00000000000000000000000000000002"
	idExpired = "ap_00000000000000000000000000000003"
	idRefused = "ap_00000000000000000000000000000004" // pending, but its Decide fails
	idUnknown = "ap_0000000000000000000000000000ffff"
)

// hostile is text of an untrusted request: markup that must be shown as
// text.
const hostile = `<img src=x onerror="document.body.dataset.pwned=1"><script>document.body.dataset.pwned=1</script>`

// decided is one call of the fake store's Decide.
type decided struct {
	id string
	d  Decision
}

// fakeStore is a Store of a few approvals; each Decide that takes is sent
// on decisions, and so is each of idRefused, which it refuses.
type fakeStore struct {
	mu        sync.Mutex
	views     map[string]View
	decisions chan decided
}

func newStore() *fakeStore {
	exp := time.Now().Add(15 * time.Minute).UTC().Truncate(time.Second)
	s := &fakeStore{views: map[string]View{}, decisions: make(chan decided, 16)}
	for _, v := range []View{
		{ID: idPending, State: "pending", Summary: "agent-7 asks to put prod/db/password " + hostile, Reason: "prod writes need a human " + hostile,
			Fingerprint: strings.Repeat("ab", 32), ExpiresAt: exp},
		{ID: idOther, State: "pending", Summary: "agent-7 asks to get prod/api-key", Reason: "", Fingerprint: strings.Repeat("cd", 32), ExpiresAt: exp},
		{ID: idExpired, State: "expired", Summary: "agent-7 asks to get prod/old", Fingerprint: strings.Repeat("ef", 32), ExpiresAt: exp.Add(-time.Hour)},
		{ID: idRefused, State: "pending", Summary: "agent-7 asks to exec deploy", Fingerprint: strings.Repeat("01", 32), ExpiresAt: exp},
	} {
		s.views[v.ID] = v
	}
	return s
}

func (s *fakeStore) Pending() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	var vs []View
	for _, id := range []string{idPending, idOther, idExpired, idRefused} {
		if v := s.views[id]; v.State == "pending" {
			vs = append(vs, v)
		}
	}
	return vs
}

func (s *fakeStore) View(id string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[id]
	return v, ok
}

func (s *fakeStore) Decide(id string, d Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[id]
	switch {
	case !ok:
		return errors.New("no such approval")
	case id == idRefused:
		s.decisions <- decided{id, d}
		return errors.New(`the approval <b>expired</b> while you read it`)
	case v.State != "pending":
		return errors.New("not pending")
	}
	v.State = "denied"
	if d.Grant {
		v.State = "approved"
	}
	s.views[id] = v
	s.decisions <- decided{id, d}
	return nil
}

// add adds a pending approval of id.
func (s *fakeStore) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views[id] = View{ID: id, State: "pending", Summary: "agent-7 asks to get " + id, Fingerprint: strings.Repeat("9", 64), ExpiresAt: time.Now().Add(time.Minute)}
}

// state is the state of the approval id.
func (s *fakeStore) state(id string) string {
	v, _ := s.View(id)
	return v.State
}

// fixture is a running page over a fake store.
type fixture struct {
	srv   *Server
	store *fakeStore
	base  string // http://127.0.0.1:PORT
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store := newStore()
	srv, err := Start(Options{Listen: "127.0.0.1:0", Token: testToken, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &fixture{srv: srv, store: store, base: strings.TrimSuffix(srv.ListURL(), "/approvals/")}
}

// req is a request's parts a test sets.
type req struct {
	method, path string
	header       map[string]string // "" deletes
	body         string
}

// do sends r, with the token, this server's Origin, the CSRF token and a
// JSON Content-Type unless r.header says otherwise.
func (f *fixture) do(t *testing.T, r req) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, f.base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+testToken)
	if r.method == "POST" {
		hr.Header.Set("Origin", f.base)
		hr.Header.Set(CSRFHeader, f.srv.csrf(testToken))
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	if host := r.header["Host"]; host != "" {
		hr.Host = host
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// took is the decision the store took during the last request (Decide
// runs before the answer is written), or a failure of t.
func (f *fixture) took(t *testing.T) decided {
	t.Helper()
	select {
	case d := <-f.store.decisions:
		return d
	default:
		t.Error("the store took no decision")
		return decided{}
	}
}

// noDecision fails t if the store took a decision.
func (f *fixture) noDecision(t *testing.T, what string) {
	t.Helper()
	select {
	case d := <-f.store.decisions:
		t.Errorf("%s: decided %+v", what, d)
	default:
	}
}
