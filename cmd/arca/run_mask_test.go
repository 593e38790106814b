package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// maskValue is a value whose forms differ from its bytes: JSON escapes its
// quote and backslash, URL escaping its slash and quote, and its base64 and
// hex are other text again.
const maskValue = `pa"ss\wd/2024-xyz`

// shHex is sh that prints $K in lower-case hex, one printf per byte (no
// od or xxd needed).
const shHex = `s=$K; while [ -n "$s" ]; do r=${s#?}; c=${s%"$r"}; printf %02x "'$c"; s=$r; done; echo`

// A real child printing its value raw, JSON-escaped (by arca env, run as
// the child), base64 (the base64 command, alone and after a prefix) and
// hex gets every one of them redacted; with --no-mask they all pass.
func TestRunMaskFormsRealChild(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte(maskValue))
	script := `printf 'raw %s\n' "$K"
arca env --format json --secret K=arca://app/k
printf '%s' "$K" | base64
printf 'user:%s' "$K" | base64
` + shHex
	forms := map[string]string{
		"raw":    maskValue,
		"json":   `pa\"ss\\wd/2024-xyz`,
		"base64": base64.StdEncoding.EncodeToString([]byte(maskValue))[:20],
		"hex":    hex.EncodeToString([]byte(maskValue)),
	}
	out, st, stderr := h.status(t, nil, "arca", "run", "--secret", "K=arca://app/k", "--", "sh", "-c", script)
	if st != 0 || stderr != "" {
		t.Fatalf("arca run: exit %d, stderr %q", st, stderr)
	}
	for name, form := range forms {
		if bytes.Contains(out, []byte(form)) {
			t.Errorf("the %s form passed: %q", name, out)
		}
	}
	if n := bytes.Count(out, []byte("<redacted:K>")); n != 5 {
		t.Errorf("%d placeholders, want 5 (raw, JSON, base64 twice, hex):\n%s", n, out)
	}
	if !bytes.HasPrefix(out, []byte(`raw <redacted:K>`+"\n"+`{"K":"<redacted:K>"}`+"\n")) {
		t.Errorf("output %q", out)
	}
	out, st, stderr = h.status(t, nil, "arca", "run", "--no-mask", "--secret", "K=arca://app/k", "--", "sh", "-c", script)
	if st != 0 || stderr != "" {
		t.Fatalf("arca run --no-mask: exit %d, stderr %q", st, stderr)
	}
	for name, form := range forms {
		if !bytes.Contains(out, []byte(form)) {
			t.Errorf("--no-mask: the %s form is missing: %q", name, out)
		}
	}
}

// A value under 4 bytes is warned about by its variable's name, once,
// before the child starts (the child's own stderr line comes after), and
// the child runs; the value never reaches arca's stderr from arca.
func TestRunShortValueWarning(t *testing.T) {
	h := newArcaHome(t)
	const short = "Zq9"
	h.put(t, "arca://app/short", []byte(short))
	h.put(t, "arca://app/long", []byte("long-CANARY-value"))
	out, st, stderr := h.status(t, nil, "arca", "run", "--secret", "S=arca://app/short", "--secret", "L=arca://app/long",
		"--", "sh", "-c", `echo child-started >&2; echo "$L"; exit 3`)
	want := "arca: warning: the value of S is under 4 bytes: it cannot be scrubbed from the command's output, which shows it as written\nchild-started\n"
	if st != 3 || stderr != want || string(out) != "<redacted:L>\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 3, the warning first", st, out, stderr)
	}
	if strings.Contains(stderr, short) || strings.Contains(stderr, "CANARY") {
		t.Fatalf("a value reached stderr: %q", stderr)
	}
}
