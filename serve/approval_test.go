package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// humanPDPScript denies a put with arca:approval unless the request
// carries an approved approval or falls under an active grant; it
// allows everything else.
const humanPDPScript = `read -r l; case "$l" in *'"op":"put"'*) case "$l" in *'"state":"approved"'*|*'"state":"active"'*) echo '{"allow":true}';; *) echo '{"allow":false,"reason":"prod writes need a human","obligations":["arca:approval"]}';; esac;; *) echo '{"allow":true}';; esac`

// converse runs a session in which talk sends request lines one at a
// time, each answered before the next is sent, and returns its
// transcript.
func converse(t *testing.T, f *fixture, talk func(send func(line string) map[string]any)) transcript {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error)
	go func() {
		defer inW.Close()
		br := bufio.NewReader(outR)
		var failed error
		talk(func(line string) map[string]any {
			if failed != nil {
				return nil
			}
			if _, failed = io.WriteString(inW, line+"\n"); failed != nil {
				return nil
			}
			var l string
			if l, failed = br.ReadString('\n'); failed != nil {
				return nil
			}
			var m map[string]any
			failed = json.Unmarshal([]byte(l), &m)
			return m
		})
		inW.Close()
		_, err := io.Copy(io.Discard, outR)
		if failed == nil && !errors.Is(err, io.EOF) {
			failed = err
		}
		done <- failed
	}()
	tr := f.session(t, sessionOpts{stdin: inR, stdout: outW})
	outW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return tr
}

func errorOf(m map[string]any) (code, cause string, details map[string]any) {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return "", "", nil
	}
	code, _ = e["code"].(string)
	details, _ = e["details"].(map[string]any)
	cause, _ = details["cause"].(string)
	return code, cause, details
}

// TestApprovalOverTheWire: the approval round trip as a host drives it:
// a put answered approval_required at once, the approval reported
// pending, approved by the host's approve with a scope of one use, the
// retry allowed, the next put denied grant_exhausted; every line valid
// against the schemas (checkWire), and the events in the audit.
func TestApprovalOverTheWire(t *testing.T) {
	f := newFixtureConfig(t, "[serve.pdp]\nexec = "+quoteTOML(humanPDPScript)+"\ntimeout_ms = 3000\n")
	put := `{"id":1,"op":"put","ref":"arca://app/db","value":"s3cret-value","actor":"agent:a"`
	var id string
	tr := converse(t, f, func(send func(string) map[string]any) {
		code, _, details := errorOf(send(put + "}"))
		ap, _ := details["approval"].(map[string]any)
		id, _ = ap["id"].(string)
		if code != "approval_required" || id == "" || ap["summary"] != "agent:a asks to put app/db in env default" || ap["url"] != nil {
			t.Errorf("put: %s %v", code, details)
			return
		}
		if code, _, _ := errorOf(send(put + "}")); code != "approval_required" {
			t.Errorf("the same put again: %s", code)
		}
		if r := send(`{"id":2,"op":"approval","approval":"` + id + `"}`); r["ok"] != true || r["result"].(map[string]any)["state"] != "pending" {
			t.Errorf("approval: %v", r)
		}
		r := send(`{"id":3,"op":"approve","approval":"` + id + `","decision":"grant","scope":{"uses":1},"approver":"human:ana"}`)
		if r["ok"] != true || r["result"].(map[string]any)["state"] != "approved" {
			t.Errorf("approve: %v", r)
		}
		if r := send(put + `,"approval":"` + id + `"}`); r["ok"] != true {
			t.Errorf("retry: %v", r)
		}
		if _, cause, _ := errorOf(send(put + "}")); cause != "grant_exhausted" {
			t.Errorf("put past the scope: %s", cause)
		}
		if r := send(`{"id":4,"op":"revoke","all":true}`); r["ok"] != true || r["result"].(map[string]any)["revoked"] != 0.0 {
			t.Errorf("revoke: %v", r)
		}
		if code, _, _ := errorOf(send(`{"id":5,"op":"approve","approval":"` + id + `","decision":"deny","approver":"x"}`)); code != "bad_request" {
			t.Errorf("deciding twice: %s", code)
		}
	})
	events := strings.Join(tr.stderr, "\n")
	for _, want := range []string{`"event":"approval.request"`, `"event":"approval.decide"`, `"via":"op","uses":1}`, `"event":"grant.open"`,
		`"event":"grant.close","op":"put","outcome":"ok","actor":"agent:a","env":"default","ref":"app/db","message":"exhausted"`,
		`"event":"revoke","op":"revoke","outcome":"ok"`} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %s", want)
		}
	}
	if strings.Contains(events, "s3cret-value") {
		t.Error("a value reached the audit")
	}
}
