package pdp

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
)

// The AuthZEN 1.0 information model, as the specification defines the
// access evaluation request: subject, action and resource required, each
// with its required keys; context optional.
type azTestEntity struct {
	Type       *string         `json:"type"`
	ID         *string         `json:"id"`
	Properties json.RawMessage `json:"properties"`
}

type azTestRequest struct {
	Subject *azTestEntity `json:"subject"`
	Action  *struct {
		Name       *string         `json:"name"`
		Properties json.RawMessage `json:"properties"`
	} `json:"action"`
	Resource *azTestEntity   `json:"resource"`
	Context  json.RawMessage `json:"context"`
}

// authzenServer is an AuthZEN PDP that follows the specification: POST
// /access/v1/evaluation with a JSON evaluation request, answered 400 when
// the request does not follow the information model, and otherwise with
// responses taken from the specification's examples. Its policy: agent:ci
// may get a secret in prod; a list is refused with the specification's
// Reason Object; anything else with a plain reason.
func authzenServer(seen chan<- []byte) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /access/v1/evaluation", func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		body.ReadFrom(r.Body)
		if seen != nil {
			seen <- body.Bytes()
		}
		var req azTestRequest
		dec := json.NewDecoder(bytes.NewReader(body.Bytes()))
		dec.DisallowUnknownFields()
		if r.Header.Get("Content-Type") != "application/json" || dec.Decode(&req) != nil || !req.valid() {
			http.Error(w, `{"error":"invalid request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var env struct {
			Env string `json:"env"`
		}
		json.Unmarshal(req.Resource.Properties, &env)
		switch {
		case *req.Subject.ID == "agent:ci" && *req.Action.Name == "get" && *req.Resource.Type == "secret" && env.Env == "prod":
			w.Write([]byte(`{"decision": true}`))
		case *req.Action.Name == "list":
			w.Write([]byte(`{
  "decision": false,
  "context": {
    "id": "0",
    "reason_admin": {"en": "Request failed policy C076E82F"},
    "reason_user": {
      "en-403": "Insufficient privileges. Contact your administrator",
      "es-403": "Privilegios insuficientes. Póngase en contacto con su administrador"
    }
  }
}`))
		default:
			w.Write([]byte(`{"decision": false, "context": {"reason": "Subject is a viewer of the resource"}}`))
		}
	})
	return mux
}

func (r azTestRequest) valid() bool {
	ok := func(e *azTestEntity) bool { return e != nil && e.Type != nil && e.ID != nil }
	return ok(r.Subject) && ok(r.Resource) && r.Action != nil && r.Action.Name != nil
}

func TestAuthZENServer(t *testing.T) {
	tcp := httptest.NewServer(authzenServer(nil))
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "authzen.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	usrv := &http.Server{Handler: authzenServer(nil)}
	go usrv.Serve(l)
	defer usrv.Close()

	for _, url := range []string{tcp.URL, "unix:" + sock} {
		d := New(Config{URL: url, API: APIAuthZEN, Timeout: quick})
		for _, c := range []struct {
			req  Request
			want Verdict
		}{
			{Request{Actor: "agent:ci", Attestation: "tok", Op: "get", Env: "prod", Ref: "app/db"}, Verdict{Allow: true}},
			{Request{Actor: "agent:ci", Op: "put", Env: "prod", Ref: "app/db"}, Verdict{Reason: "Subject is a viewer of the resource"}},
			{Request{Op: "get", Env: "prod", Ref: "app/db"}, Verdict{Reason: "Subject is a viewer of the resource"}},
			{Request{Actor: "agent:ci", Op: "list", Env: "prod"}, Verdict{Reason: "Insufficient privileges. Contact your administrator"}},
		} {
			v, err := d.Decide(context.Background(), c.req)
			if err != nil || !reflect.DeepEqual(v, c.want) {
				t.Errorf("%s %+v: verdict %+v, err %v; want %+v", url, c.req, v, err, c.want)
			}
		}
		d.Close()
	}
}

// TestAuthZENRequest: the evaluation request arca sends, exactly.
func TestAuthZENRequest(t *testing.T) {
	seen := make(chan []byte, 1)
	srv := httptest.NewServer(authzenServer(seen))
	defer srv.Close()
	d := New(Config{URL: srv.URL, API: APIAuthZEN, Timeout: quick})
	defer d.Close()
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Actor: "agent:ci", Attestation: "tok<&>", Op: "get", Env: "prod", Ref: "app/db"},
			`{"subject":{"type":"actor","id":"agent:ci","properties":{"attestation":"tok<&>"}},"action":{"name":"get"},` +
				`"resource":{"type":"secret","id":"app/db","properties":{"env":"prod"}}}`},
		{Request{Op: "list", Env: "dev"},
			`{"subject":{"type":"actor","id":""},"action":{"name":"list"},"resource":{"type":"env","id":"dev","properties":{"env":"dev"}}}`},
		{Request{Op: "get", Env: "dev", Ref: "app/db", SupportedObligations: []string{"arca:no_reveal"}},
			`{"subject":{"type":"actor","id":""},"action":{"name":"get"},"resource":{"type":"secret","id":"app/db","properties":{"env":"dev"}},` +
				`"context":{"supported_obligations":["arca:no_reveal"]}}`},
		{Request{Op: "get", Env: "dev", Ref: "app/db", Grant: &Grant{ID: "gr_1", Uses: 2, MaxUses: 5, ExpiresAt: "2026-01-02T03:04:05.000000000Z", State: "active"}},
			`{"subject":{"type":"actor","id":""},"action":{"name":"get"},"resource":{"type":"secret","id":"app/db","properties":{"env":"dev"}},` +
				`"context":{"grant":{"id":"gr_1","uses":2,"max_uses":5,"expires_at":"2026-01-02T03:04:05.000000000Z","state":"active"}}}`},
		{Request{Op: "put", Env: "prod", Ref: "app/db", Approval: &Approval{ID: "ap_1", State: "approved", Approver: "alice", Scope: &Scope{Uses: 1}}},
			`{"subject":{"type":"actor","id":""},"action":{"name":"put"},"resource":{"type":"secret","id":"app/db","properties":{"env":"prod"}},` +
				`"context":{"approval":{"id":"ap_1","state":"approved","approver":"alice","scope":{"uses":1}}}}`},
	} {
		if _, err := d.Decide(context.Background(), c.req); err != nil {
			t.Fatal(err)
		}
		if got := string(bytes.TrimSpace(<-seen)); got != c.want {
			t.Errorf("sent %s\nwant %s", got, c.want)
		}
	}
}

// TestAuthZENObligations: obligations given as strings or as objects with
// type and properties map to the strings arca reads; anything else makes
// the response unusable.
func TestAuthZENObligations(t *testing.T) {
	for _, c := range []struct {
		obligations string
		want        []string
	}{
		{`["log", {"type":"arca:no_reveal"}]`, []string{"log", "arca:no_reveal"}},
		{`[{"type":"arca:no_reveal","properties":{}}]`, []string{"arca:no_reveal"}},
		{`[{"type":"arca:ttl","properties":{"value":60}}]`, []string{"arca:ttl=60"}},
		{`[{"type":"arca:max_uses","properties":{"value":"5"}, "id":"o1"}]`, []string{"arca:max_uses=5"}},
		{`[{"type":"notify","properties":{"to":"oncall","value":1}}]`, []string{`notify={"to":"oncall","value":1}`}},
		{`[{"type":"arca:ttl","properties":{"value":true}}]`, []string{`arca:ttl={"value":true}`}},
	} {
		v, why := parseAuthZEN([]byte(`{"decision":true,"context":{"obligations":` + c.obligations + `}}`))
		if why != "" || !reflect.DeepEqual(v.Obligations, c.want) {
			t.Errorf("%s: obligations %q (%s), want %q", c.obligations, v.Obligations, why, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `[null]`, `[{"properties":{}}]`, `[{"type":7}]`, `[{"type":"a","properties":[]}]`,
		`[{"type":"a","type":"b"}]`, `{"type":"arca:no_reveal"}`} {
		v, why := parseAuthZEN([]byte(`{"decision":true,"context":{"obligations":` + bad + `}}`))
		if why == "" {
			t.Errorf("%s: verdict %+v, want it refused", bad, v)
		}
	}
}
