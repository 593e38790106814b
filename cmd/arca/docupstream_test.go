package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// docUpstreamVar names the variable that holds the URL of the service the
// docs' serve sessions reach (http://127.0.0.1:PORT): a doc's config
// shows http://127.0.0.1:8080, and the session's mark puts this URL in
// its place before serve starts.
const docUpstreamVar = "DOC_UPSTREAM"

// docUpstream starts, for the length of t, the service the docs' use
// examples call: on loopback, it answers a path ending in /missing with
// 404, and any other request with 200 and a JSON object of its method,
// its path and the Authorization header it carried, so a session shows
// the credential arriving, and scrubbed on its way back. It sends no
// Date, so an answer is the same on every run.
func docUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"no such ticket"}` + "\n"))
			return
		}
		b, _ := json.Marshal(map[string]string{"method": r.Method, "path": r.URL.Path, "authorization": r.Header.Get("Authorization")})
		w.Write(append(b, '\n'))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// withUpstream is a setup that gives each session the upstream's URL.
func withUpstream(url string) func(*testscript.Env) error {
	return func(env *testscript.Env) error {
		env.Setenv(docUpstreamVar, url)
		return nil
	}
}

func TestDocUpstream(t *testing.T) {
	url := docUpstream(t)
	req, _ := http.NewRequest("GET", url+"/tickets/7", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || got["path"] != "/tickets/7" || got["authorization"] != "Bearer tok" || resp.Header.Get("Date") != "" {
		t.Errorf("the upstream answered %d %v (Date %q)", resp.StatusCode, got, resp.Header.Get("Date"))
	}
	resp2, err := http.Get(url + "/tickets/missing")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 404 {
		t.Errorf("/tickets/missing answered %d, not 404", resp2.StatusCode)
	}
}
