package approvalpage

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

const (
	rqPending = "rq_00000000000000000000000000000001"
	rqStored  = "rq_00000000000000000000000000000002"
	rqUnknown = "rq_0000000000000000000000000000ffff"
)

// fakeRequests holds one pending and one stored request, and keeps each
// value Fulfil is given.
type fakeRequests struct {
	mu     sync.Mutex
	views  map[string]RequestView
	values []vault.Secret
}

func (q *fakeRequests) PendingRequests() []RequestView {
	q.mu.Lock()
	defer q.mu.Unlock()
	return []RequestView{q.views[rqPending]}
}

func (q *fakeRequests) Request(id string) (RequestView, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.views[id]
	return v, ok
}

func (q *fakeRequests) Fulfil(_ context.Context, id string, value vault.Secret) (RequestView, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.values = append(q.values, value)
	if string(value.Reveal()) == "refused" {
		return q.views[id], errors.New("not stored: denied by policy: <b>no</b>")
	}
	v := q.views[id]
	v.State, v.Version = "stored", 3
	q.views[id] = v
	return v, nil
}

// taken is the values Fulfil was given, as text.
func (q *fakeRequests) taken() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for _, v := range q.values {
		out = append(out, string(v.Reveal()))
	}
	q.values = nil
	return out
}

func newRequestFixture(t *testing.T) (*fixture, *fakeRequests) {
	t.Helper()
	exp := time.Now().Add(15 * time.Minute)
	q := &fakeRequests{views: map[string]RequestView{
		rqPending: {ID: rqPending, State: "pending", Ref: "arca://app/db", Env: "dev", Description: "the db " + hostile, Actor: "agent-7", Client: "probe", ExpiresAt: exp},
		rqStored:  {ID: rqStored, State: "stored", Ref: "arca://app/key", Env: "dev", Version: 2, ExpiresAt: exp},
	}}
	srv, err := Start(Options{Listen: "127.0.0.1:0", Token: testToken, Store: newStore(), Requests: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &fixture{srv: srv, base: strings.TrimSuffix(srv.ListURL(), "/approvals/")}, q
}

// TestRequestValue: a value reaches Requests exactly as typed, and the
// answer holds its version, never the value. A body that is not
// {"value": "<UTF-8 string>"}, empty, over the cap, of another type, for
// a request unknown or no longer pending, is refused before Requests sees
// it; Requests' refusal is 409 with its reason.
func TestRequestValue(t *testing.T) {
	f, q := newRequestFixture(t)
	path := "/requests/" + rqPending
	resp, body := f.do(t, req{method: "POST", path: path, body: `{"value":"s3cret \u00e9\ud83d\ude00 \ufffd �"}`})
	if resp.StatusCode != 200 || !strings.Contains(body, `"version":3`) || strings.Contains(body, "s3cret") {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	if got := q.taken(); len(got) != 1 || got[0] != "s3cret é😀 \uFFFD \uFFFD" {
		t.Fatalf("Requests took %q", got)
	}
	q.views[rqPending] = RequestView{ID: rqPending, State: "pending", Ref: "arca://app/db", Env: "dev", ExpiresAt: time.Now().Add(time.Minute)}
	for _, tc := range []struct {
		path, body, ctype string
		status            int
		want              string
	}{
		{path, `{"value":"lone \ud800 surrogate"}`, "", 400, "unpaired surrogate"},
		{path, "{\"value\":\"bad \xff byte\"}", "", 400, "not UTF-8"},
		{path, `{"value":""}`, "", 400, "empty"},
		{path, `{"value":7}`, "", 400, "must be a JSON string"},
		{path, `{"value":"a","value":"b"}`, "", 400, `not {"value"`},
		{path, `{"Value":"a"}`, "", 400, `not {"value"`},
		{path, `{"value":"a","other":1}`, "", 400, `not {"value"`},
		{path, `{"value":"a"} {}`, "", 400, `not {"value"`},
		{path, `value=a`, "application/x-www-form-urlencoded", 415, "JSON"},
		{path, `{"value":"` + strings.Repeat("v", manifest.MaxValue+1) + `"}`, "", 413, "at most 65536 bytes"},
		{path, `{"value":"` + strings.Repeat(`\u0001`, MaxValueBody/6) + `"}`, "", 413, "at most 65536 bytes"},
		{"/requests/" + rqUnknown, `{"value":"a"}`, "", 404, "no such secret request"},
		{"/requests/" + rqStored, `{"value":"a"}`, "", 409, "this request is stored"},
		{path, `{"value":"refused"}`, "", 409, "denied by policy: <b>no</b>"},
	} {
		h := map[string]string{}
		if tc.ctype != "" {
			h["Content-Type"] = tc.ctype
		}
		resp, body := f.do(t, req{method: "POST", path: tc.path, body: tc.body, header: h})
		var e struct{ Error string }
		if json.Unmarshal([]byte(body), &e) == nil && e.Error != "" {
			body = e.Error
		}
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%.60s: %d %s, want %d with %q", tc.body, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	if got := q.taken(); len(got) != 1 || got[0] != "refused" {
		t.Errorf("Requests took %q: a refused body reached it", got)
	}
}

// TestRequestReads: the list and a request's page answer JSON with the
// token, the page that asks for it without (401, no data); a page started
// without requests has no such routes.
func TestRequestReads(t *testing.T) {
	f, _ := newRequestFixture(t)
	resp, body := f.do(t, req{method: "GET", path: "/requests/"})
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":"`+rqPending+`"`) || strings.Contains(body, rqStored) || !strings.Contains(body, `"csrf"`) {
		t.Errorf("the list: %d %s", resp.StatusCode, body)
	}
	resp, body = f.do(t, req{method: "GET", path: "/requests/" + rqPending})
	if resp.StatusCode != 200 || !strings.Contains(body, `"ref":"arca://app/db"`) || !strings.Contains(body, `"client":"probe"`) {
		t.Errorf("one: %d %s", resp.StatusCode, body)
	}
	resp, body = f.do(t, req{method: "GET", path: "/requests/" + rqPending, header: map[string]string{"Authorization": ""}})
	if resp.StatusCode != 401 || !strings.Contains(body, "/assets/request.js") || strings.Contains(body, "arca://app/db") {
		t.Errorf("without the token: %d %s", resp.StatusCode, body)
	}
	if resp, _ := f.do(t, req{method: "GET", path: "/assets/request.js"}); resp.StatusCode != 200 {
		t.Errorf("the script: %d", resp.StatusCode)
	}
	plain := newFixture(t)
	if resp, _ := plain.do(t, req{method: "GET", path: "/requests/"}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a page without requests answers /requests/ %d", resp.StatusCode)
	}
}
