package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to write from the verb's goroutine
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// uiCLI is a cli in a fresh home with an initialized vault.
func uiCLI(t *testing.T) (*cli, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	home := t.TempDir()
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	c := &cli{stdin: strings.NewReader(""), stdout: out, stderr: errb, now: time.Now,
		getenv:  func(k string) string { return map[string]string{"HOME": home}[k] },
		environ: func() []string { return []string{"HOME=" + home} }}
	if st := c.main(context.Background(), []string{"init"}); st != 0 {
		t.Fatalf("init: %d %s", st, errb)
	}
	return c, out, errb
}

var urlLine = regexp.MustCompile(`(?m)^http://([0-9.]+):([0-9]+)/#token=([0-9a-zA-Z-]+)\n`)

// startUI runs arca ui with args until the test ends, and returns the URL
// parts its first line gives.
func startUI(t *testing.T, c *cli, out *lockedBuffer, args ...string) (host, port, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- c.main(ctx, append([]string{"ui"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case st := <-done:
			if st != 0 {
				t.Errorf("arca ui exited %d when stopped", st)
			}
		case <-time.After(10 * time.Second):
			t.Error("arca ui did not stop")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := urlLine.FindStringSubmatch(out.String()); m != nil {
			return m[1], m[2], m[3]
		}
		select {
		case st := <-done:
			t.Fatalf("arca ui exited %d before it printed its URL", st)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("arca ui printed no URL: %q", out.String())
	return "", "", ""
}

// By default arca ui binds 127.0.0.1 on a free port with a fresh token,
// prints the URL first and warns of nothing; the token is never on stderr.
func TestUIDefaults(t *testing.T) {
	c, out, errb := uiCLI(t)
	host, port, token := startUI(t, c, out)
	if host != "127.0.0.1" || port == "0" || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(token) {
		t.Fatalf("URL %q", out.String())
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/api/envs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/envs with the token: %v %v", resp, err)
	}
	resp.Body.Close()
	if errb.String() != "" {
		t.Fatalf("stderr: %q", errb.String())
	}
	// $ARCA_UI_TOKEN gives the token without putting it in argv.
	c2, out2, _ := uiCLI(t)
	base := c2.getenv
	c2.getenv = func(k string) string {
		if k == "ARCA_UI_TOKEN" {
			return "from-the-environment-42"
		}
		return base(k)
	}
	if _, _, tok := startUI(t, c2, out2); tok != "from-the-environment-42" {
		t.Fatalf("the token from $ARCA_UI_TOKEN: %q", tok)
	}
}

// A non-loopback bind without a token is refused (no flag forces it); with
// one it warns on stderr at every start.
func TestUIBindRules(t *testing.T) {
	c, cout, errb := uiCLI(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0"} {
		if st := c.main(context.Background(), []string{"ui", "--addr", addr}); st != 2 || !strings.Contains(errb.String(), "is not a loopback address") {
			t.Fatalf("--addr %s without a token: exit %d, %q", addr, st, errb.String())
		}
	}
	if st := c.main(context.Background(), []string{"ui", "--addr", "nonsense"}); st != 2 {
		t.Fatalf("a bad --addr: exit %d", st)
	}
	if st := c.main(context.Background(), []string{"ui", "--token", "short"}); st != 2 || !strings.Contains(errb.String(), "at least 16") {
		t.Fatalf("a short token: exit %d, %q", st, errb.String())
	}
	// A token with a byte a header (or a cookie) cannot carry is refused at
	// start, from the flag or the environment, naming the characters a
	// token may hold and never the token.
	for _, tok := range []string{"semi;colon-0123456789", `quo"te-0123456789`, `back\slash-0123456789`, "non-ascii-\u00e9-0123456789", "sp ace-0123456789"} {
		errb := &lockedBuffer{}
		c.stderr = errb
		printed := cout.String()
		if st := c.main(context.Background(), []string{"ui", "--token", tok}); st != 2 ||
			!strings.Contains(errb.String(), "arca: --token: the token holds a character that is not allowed (at byte ") ||
			!strings.Contains(errb.String(), "the characters allowed are the letters A-Z and a-z, the digits 0-9 and - . _ ~ + / (and = only at its end)") ||
			strings.Contains(errb.String(), tok) || cout.String() != printed {
			t.Fatalf("--token %q: exit %d, %q", tok, st, errb.String())
		}
		base := c.getenv
		c.getenv = func(k string) string {
			if k == "ARCA_UI_TOKEN" {
				return tok
			}
			return base(k)
		}
		if st := c.main(context.Background(), []string{"ui"}); st != 2 || !strings.Contains(errb.String(), "arca: $ARCA_UI_TOKEN: the token holds a character that is not allowed") {
			t.Fatalf("$ARCA_UI_TOKEN %q: exit %d, %q", tok, st, errb.String())
		}
		c.getenv = base
	}
	c, out, errb := uiCLI(t)
	host, _, token := startUI(t, c, out, "--addr", "0.0.0.0:0", "--token", "given-token-0123456789")
	if host != "0.0.0.0" || token != "given-token-0123456789" {
		t.Fatalf("URL %q", out.String())
	}
	if w := errb.String(); !strings.Contains(w, "warning: arca ui listens on 0.0.0.0:") || !strings.Contains(w, "plain HTTP") || strings.Contains(w, "given-token-0123456789") {
		t.Fatalf("stderr: %q", w)
	}
}

// uiAudit reads /api/audit of an arca ui run: each event's ref and
// source, and each trail's chain.
func uiAudit(t *testing.T, port, token string) (refs map[string]string, chains []struct {
	File string
	OK   bool
}) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/api/audit", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Events []struct{ Ref, Source string }
		Chains []struct {
			File string
			OK   bool
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	refs = map[string]string{}
	for _, e := range got.Events {
		refs[e.Ref] = e.Source
	}
	return refs, got.Chains
}

// servedAndGot runs a serve session that gets served/only and a CLI get of
// cli/only, and returns the session's wire (its stderr).
func servedAndGot(t *testing.T, c *cli, errb *lockedBuffer) string {
	t.Helper()
	c.stdin = strings.NewReader(`{"id":1,"op":"get","ref":"arca://served/only"}` + "\n")
	if st := c.main(context.Background(), []string{"serve"}); st != 0 || !strings.Contains(errb.String(), `"ref":"served/only"`) {
		t.Fatalf("arca serve: exit %d, wire %q", st, errb.String())
	}
	wire := errb.String()
	if st := c.main(context.Background(), []string{"get", "arca://cli/only"}); st == 0 {
		t.Fatal("arca get of a missing record succeeded")
	}
	return wire
}

// arca ui with no FILE reads the CLI's audit file, as ui.md says: a serve
// session's events, on its stderr, are not on the page, while the CLI's
// are.
func TestUIReadsTheAuditFile(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ui.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), "The trail it reads is the CLI's audit file, or the files given: `arca ui FILE...` reads each") {
		t.Fatal("docs/ui.md no longer says the page reads the CLI's audit file, or the files given")
	}
	c, out, errb := uiCLI(t)
	servedAndGot(t, c, errb)
	_, port, token := startUI(t, c, out)
	refs, chains := uiAudit(t, port, token)
	if refs["cli/only"] != "cli" {
		t.Fatalf("the CLI's get is not on the page: %+v", refs)
	}
	if src, ok := refs["served/only"]; ok {
		t.Fatalf("a serve session's event is on the page (source %q)", src)
	}
	if len(chains) != 1 || !chains[0].OK {
		t.Fatalf("chains: %+v", chains)
	}
}

// arca ui FILE... reads the files given: the CLI's audit file and a
// captured serve wire, merged, each with its chain.
func TestUIReadsTheFilesGiven(t *testing.T) {
	c, out, errb := uiCLI(t)
	wire := servedAndGot(t, c, errb)
	home := c.getenv("HOME")
	wirePath := filepath.Join(home, "wire.log")
	if err := os.WriteFile(wirePath, []byte(wire), 0o600); err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(home, ".local", "state", "arca", "audit.log")
	_, port, token := startUI(t, c, out, auditFile, wirePath)
	refs, chains := uiAudit(t, port, token)
	if refs["cli/only"] != "cli" || refs["served/only"] != "serve" {
		t.Fatalf("the page's events: %+v", refs)
	}
	if len(chains) != 2 || chains[0].File != auditFile || chains[1].File != wirePath || !chains[0].OK || !chains[1].OK {
		t.Fatalf("chains: %+v", chains)
	}
}
