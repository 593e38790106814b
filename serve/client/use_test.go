package client

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// The uses' requests as the client writes them: each field the schema's
// way (query an object of arrays of strings, headers of strings, args and
// services arrays), an object's keys in sorted order, a raw field left
// nil not sent and one set empty sent empty.
func TestUseRequestLines(t *testing.T) {
	stop := true
	for _, c := range []struct {
		op   string
		r    Request
		want string
	}{
		{"http", Request{Service: "echo", Method: "POST", Path: "/a b", Query: url.Values{"z": {"1"}, "a": {"2", "3"}},
			Headers: map[string]string{"X-B": "b", "Accept": "*/*"}, Body: "é\n"},
			`{"id":1,"op":"http","service":"echo","method":"POST","path":"/a b","query":{"a":["2","3"],"z":["1"]},"headers":{"Accept":"*/*","X-B":"b"},"body":"é\n"}`},
		{"http", Request{Service: "echo", Method: "GET", Path: "/", Query: map[string][]string{}, BodyB64: "AAE="},
			`{"id":1,"op":"http","service":"echo","method":"GET","path":"/","query":{},"body_b64":"AAE="}`},
		{"http", Request{}, `{"id":1,"op":"http","service":"","method":"","path":""}`},
		{"exec", Request{Action: "migrate", Args: []string{"--dry-run", `"q"`}},
			`{"id":1,"op":"exec","action":"migrate","args":["--dry-run","\"q\""]}`},
		{"exec", Request{Action: "migrate", Args: []string{}}, `{"id":1,"op":"exec","action":"migrate","args":[]}`},
		{"proxy", Request{Services: []string{"echo", "git"}}, `{"id":1,"op":"proxy","services":["echo","git"]}`},
		{"proxy", Request{Stop: &stop}, `{"id":1,"op":"proxy","stop":true}`},
	} {
		got := string(appendRequest(nil, []byte("1"), c.op, c.r))
		if got != c.want+"\n" {
			t.Errorf("%s: the line is\n%s want\n%s", c.op, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: the line is not JSON: %s", c.op, got)
		}
	}
}

// The results of the uses decode into their types, and an error's
// details.cause into Cause, by either path.
func TestUseResults(t *testing.T) {
	var h HTTPResult
	line := `{"id":3,"ok":true,"result":{"service":"echo","status":502,"headers":{"Content-Type":["text/plain"]},"body":"x","truncated":true,"redactions":[{"ref":"arca://app/token","count":2}],"elapsed_ms":12},"policy":{"allow":true,"reason":"r"}}`
	if err := decode([]byte(line), sent{id: []byte("3")}, &h); err != nil {
		t.Fatal(err)
	}
	wantH := HTTPResult{Service: "echo", Status: 502, Headers: map[string][]string{"Content-Type": {"text/plain"}}, Body: "x",
		Truncated: true, Redactions: []HTTPRedaction{{Ref: "arca://app/token", Count: 2}}, ElapsedMs: 12, Policy: &Policy{Allow: true, Reason: "r"}}
	if !reflect.DeepEqual(h, wantH) {
		t.Errorf("http: %+v, want %+v", h, wantH)
	}
	var x ExecResult
	line = `{"id":3,"ok":true,"result":{"action":"a","exit_code":-1,"signal":"killed","stdout":"o","stderr":"e","truncated":{"stdout":false,"stderr":true},"redactions":[],"elapsed_ms":5}}`
	if err := decode([]byte(line), sent{id: []byte("3")}, &x); err != nil {
		t.Fatal(err)
	}
	wantX := ExecResult{Action: "a", ExitCode: -1, Signal: "killed", Stdout: "o", Stderr: "e", Truncated: ExecTruncated{Stderr: true},
		Redactions: []ExecRedaction{}, ElapsedMs: 5}
	if !reflect.DeepEqual(x, wantX) {
		t.Errorf("exec: %+v, want %+v", x, wantX)
	}
	var p ProxyResult
	line = `{"id":3,"ok":true,"result":{"base_urls":{"echo":"http://127.0.0.1:4000/echo"},"token":"t","expires_at":"2026-11-30T08:14:14Z"}}`
	if err := decode([]byte(line), sent{id: []byte("3")}, &p); err != nil {
		t.Fatal(err)
	}
	if p.BaseURLs["echo"] != "http://127.0.0.1:4000/echo" || p.Token != "t" || !p.ExpiresAt.Equal(time.Date(2026, 11, 30, 8, 14, 14, 0, time.UTC)) {
		t.Errorf("proxy: %+v", p)
	}
	for line, cause := range map[string]string{
		`{"id":3,"ok":false,"error":{"code":"upstream_failed","message":"m","details":{"cause":"blocked_address"}}}`: "blocked_address",
		`{"id":3,"ok":false,"error":{"code":"upstream_failed","message":"m"}}`:                                       "",
		`{"id":3,"ok":false,"error":{"code":"denied","message":"m"},"policy":{"allow":false}}`:                       "",
	} {
		var r HTTPResult
		err := decode([]byte(line), sent{id: []byte("3")}, &r)
		var e *Error
		if !errors.As(err, &e) || e.Cause != cause || e.Message != "m" {
			t.Errorf("%s: %#v, want cause %q", line, err, cause)
		}
	}
}
