package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/serve/approvalpage/pagetest"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// The tests in this file run arca ui as its users do: the built binary,
// its own process, a fresh HOME, the URL it prints opened in Chromium.

// arcaBin is the built arca binary and the HOME it runs with.
type arcaBin struct{ path, home string }

// buildArca builds cmd/arca and runs `arca init` in a fresh HOME.
func buildArca(t *testing.T) arcaBin {
	t.Helper()
	dir := t.TempDir()
	b := arcaBin{path: filepath.Join(dir, "arca"), home: filepath.Join(dir, "home")}
	if out, err := exec.Command("go", "build", "-o", b.path, "../cmd/arca").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/arca: %v\n%s", err, out)
	}
	if err := os.Mkdir(b.home, 0o700); err != nil {
		t.Fatal(err)
	}
	b.run(t, "init")
	return b
}

// command is arca with args, its environment only HOME and PATH.
func (b arcaBin) command(args ...string) *exec.Cmd {
	cmd := exec.Command(b.path, args...)
	cmd.Env = []string{"HOME=" + b.home, "PATH=" + os.Getenv("PATH"), "LANG=C"}
	cmd.Dir = b.home
	return cmd
}

// run runs arca with args, failing the test unless it succeeds.
func (b arcaBin) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := b.command(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("arca %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// auditFile is where the CLI of b writes its events.
func (b arcaBin) auditFile() string {
	return filepath.Join(b.home, ".local", "state", "arca", "audit.log")
}

var printedURL = regexp.MustCompile(`^(http://127\.0\.0\.1:[0-9]+/)[?#]token=([0-9a-f]{64})\n$`)

// uiRun is an arca ui process: the URL it printed, its base (the URL
// without the token) and its token.
type uiRun struct{ url, base, token string }

// startUI starts `arca ui` until the test ends and reads the URL it prints.
func (b arcaBin) startUI(t *testing.T) uiRun {
	t.Helper()
	cmd := b.command("ui")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("arca ui, stopped: %v", err)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	m := printedURL.FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("arca ui printed %q: %v", line, err)
	}
	return uiRun{url: strings.TrimSuffix(line, "\n"), base: m[1], token: m[2]}
}

// open opens url in the browser's tab and waits until the page has loaded
// every part, or says why it could not; it returns that.
func open(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return pagetest.Run(t, ctx, chromedp.Poll[string](`(() => {
		const b = document.body, s = document.getElementById("status");
		if (!b) return "";
		if (b.dataset.ready === "true") return "loaded";
		if (!s) return "not the page: " + b.innerText.slice(0, 300);
		return s.className === "failed" ? "failed: " + s.textContent : "";
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
}

// The page never vouches for an edited trail: after a line in the middle
// of the audit file is edited in place (same length, its time put back),
// the page says the chain does NOT hold, as arca audit verify does, and
// shows no anchor, though arca ui read the trail before the edit.
func TestEditedTrailInBrowser(t *testing.T) {
	b := buildArca(t)
	for _, ref := range []string{"app/alpha", "app/bravo", "app/charlie"} {
		cmd := b.command("put", "arca://"+ref)
		cmd.Stdin = strings.NewReader("value-of-" + ref)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("arca put: %v\n%s", err, out)
		}
		b.run(t, "get", "arca://"+ref)
	}
	ui := b.startUI(t)
	ctx, _ := pagetest.BrowserFor(t, 3*time.Minute)
	if st := open(t, ctx, ui.url); st != "loaded" {
		t.Fatalf("the page: %s", st)
	}
	if chain := pagetest.Run(t, ctx, chromedp.Text("#chain")); !strings.HasPrefix(chain, "The chain holds") {
		t.Fatalf("before the edit: %q", chain)
	}

	path := b.auditFile()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	trail, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(trail), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, `"event":"put"`) && strings.Contains(l, `"ref":"app/bravo"`) {
			at = i
		}
	}
	if at < 1 || at > len(lines)-3 {
		t.Fatalf("no put of app/bravo in the middle of the trail:\n%s", trail)
	}
	lines[at] = strings.Replace(lines[at], `"ref":"app/bravo"`, `"ref":"app/BRAVO"`, 1)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Join(lines, "")), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, time.Time{}, before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() {
		t.Fatalf("the edit changed the file's size: %v", err)
	}
	out, err := b.command("audit", "verify", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "BROKEN") {
		t.Fatalf("arca audit verify of the edited trail: %v\n%s", err, out)
	}

	if st := open(t, ctx, ui.base); st != "loaded" {
		t.Fatalf("the page, again: %s", st)
	}
	said := pagetest.Run(t, ctx, chromedp.Text("#chain"))
	if !strings.HasPrefix(said, "The chain does NOT hold") || strings.Contains(said, "anchor") {
		t.Fatalf("after a line was edited, the page says: %q (arca audit verify: %s)", said, out)
	}
	var got struct{ Chains []chain }
	apiGet(t, ui, "/api/audit", &got)
	if len(got.Chains) != 1 || got.Chains[0].OK || got.Chains[0].Anchor != "" || !strings.Contains(got.Chains[0].Break, fmt.Sprintf("line %d", at+2)) {
		t.Fatalf("/api/audit's chains: %+v", got.Chains)
	}
}

// apiGet reads path of the ui run with its token, into v.
func apiGet(t *testing.T, ui uiRun, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", strings.TrimSuffix(ui.base, "/")+path, nil)
	req.Header.Set("Authorization", "Bearer "+ui.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("%s: %d, Set-Cookie %q", path, resp.StatusCode, resp.Header.Values("Set-Cookie"))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The token reaches only its own ui: two arca ui runs opened in one
// browser, one tab, each keep working (neither overwrites the other's
// login); the browser holds no cookie; and a web server on another port
// of 127.0.0.1, visited after both, is sent neither token.
func TestTwoRunsInOneBrowser(t *testing.T) {
	b := buildArca(t)
	one, two := b.startUI(t), b.startUI(t)
	asked := make(chan *http.Request, 10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>another server</title><p>another server")
	}))
	defer other.Close()

	ctx, consoleErrors := pagetest.BrowserFor(t, 3*time.Minute)
	for _, step := range []struct {
		name, url string
	}{
		{"the first run's URL", one.url},
		{"the second run's URL", two.url},
		{"the first run again, without the token", one.base},
		{"the second run again, without the token", two.base},
	} {
		if st := open(t, ctx, step.url); st != "loaded" {
			t.Fatalf("%s: %s", step.name, st)
		}
		if loc := pagetest.Run(t, ctx, chromedp.Location()); strings.Contains(loc, "token") {
			t.Fatalf("%s: the token stayed in the address bar: %s", step.name, loc)
		}
		if c := pagetest.Run(t, ctx, chromedp.Evaluate[string](`document.cookie`)); c != "" {
			t.Fatalf("%s: the page has cookies: %q", step.name, c)
		}
	}
	if cs, err := chromedp.Call(ctx, storage.GetCookies, storage.GetCookiesParams{}); err != nil || len(cs.Cookies) != 0 {
		t.Fatalf("the browser holds cookies: %+v %v", cs, err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(other.URL+"/"), chromedp.WaitVisible("p")); err != nil {
		t.Fatalf("another server: %v", err)
	}
	select {
	case r := <-asked:
		var dump strings.Builder
		fmt.Fprintf(&dump, "%s %s\n", r.Method, r.URL)
		r.Header.Write(&dump)
		for _, tok := range []string{one.token, two.token} {
			if strings.Contains(dump.String(), tok) {
				t.Fatalf("another server on 127.0.0.1 was sent a ui token:\n%s", dump.String())
			}
		}
		if r.Header.Get("Cookie") != "" || r.Header.Get("Authorization") != "" {
			t.Fatalf("another server on 127.0.0.1 was sent credentials:\n%s", dump.String())
		}
	default:
		t.Fatal("the browser did not ask the other server")
	}
	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("errors in the browser console: %q", errs)
	}
}
