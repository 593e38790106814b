package inject

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func mats(kv ...string) []Materialized {
	var out []Materialized
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Materialized{Name: kv[i], Value: secret(kv[i+1])})
	}
	return out
}

// scrubWhole scrubs in with the mask set of secrets.
func scrubWhole(secrets []Materialized, in string) string {
	set, _ := maskSet(secrets)
	out, _ := set.Scrub([]byte(in))
	return string(out)
}

// Each value is registered under its variable's name, a file's too;
// literals and empty values are not; the first name of a shared value
// names it; overlapping and touching values make one placeholder naming
// each.
func TestMaskSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		secrets []Materialized
		in      string
		want    string
	}{
		{"none", nil, "plain text", "plain text"},
		{"one", mats("A", "hunter22"), "pw=hunter22\n", "pw=<redacted:A>\n"},
		{"file and literal", []Materialized{{Name: "K", Value: secret("file-value"), File: true}, {Name: "PORT", Value: secret("8443"), Literal: true}},
			"key file-value on 8443", "key <redacted:K> on 8443"},
		{"empty ignored", mats("E", "", "A", "hunter22"), "[hunter22]", "[<redacted:A>]"},
		{"same value, first name", mats("FIRST", "dup-value", "SECOND", "dup-value"), "dup-value", "<redacted:FIRST>"},
		{"overlap: one placeholder for both", mats("A", "k3y-PREFIX-S", "B", "SECRET-TAIL-4c1e9a"), "[k3y-PREFIX-SECRET-TAIL-4c1e9a]", "[<redacted:A+B>]"},
		{"touching: one placeholder", mats("A", "abcdefgh", "B", "12345678"), "abcdefgh12345678 abcdefghabcdefgh", "<redacted:A+B> <redacted:A>"},
		{"JSON, hex and base64 forms", mats("A", `pa"ss/wörd-1`),
			`{"p":` + jsonString(`pa"ss/wörd-1`) + `} ` + hex.EncodeToString([]byte(`pa"ss/wörd-1`)) + " " + base64.StdEncoding.EncodeToString([]byte(`pa"ss/wörd-1`)),
			// base64's last quantum also holds bits the value does not
			// determine alone: it stays.
			`{"p":"<redacted:A>"} <redacted:A> <redacted:A>Q==`},
	} {
		if got := scrubWhole(c.secrets, c.in); got != c.want {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A value under 4 bytes, or past the engine's bounds, is warned about by
// its variable's name alone, and the others are still scrubbed.
func TestMaskSetWarnings(t *testing.T) {
	big := strings.Repeat("B", 64<<10+1)
	secrets := []Materialized{
		{Name: "SHORT", Value: secret("q7z")},
		{Name: "OK", Value: secret("long-enough-value")},
		{Name: "BIG", Value: secret(big)},
		{Name: "LIT", Value: secret("x"), Literal: true},
		{Name: "EMPTY", Value: secret("")},
	}
	set, warnings := maskSet(secrets)
	want := []string{
		"the value of SHORT is under 4 bytes: it cannot be scrubbed from the command's output, which shows it as written",
		"the value of BIG cannot be scrubbed from the command's output, which shows it as written: scrub: a value over 65536 bytes (MaxValueLen)",
	}
	if fmt.Sprint(warnings) != fmt.Sprint(want) {
		t.Fatalf("warnings %q, want %q", warnings, want)
	}
	for _, w := range warnings {
		if strings.Contains(w, "q7z") || strings.Contains(w, "BBBB") {
			t.Fatalf("a warning holds a value: %q", w)
		}
	}
	if out, _ := set.Scrub([]byte("q7z long-enough-value")); string(out) != "q7z <redacted:OK>" {
		t.Fatalf("scrubbed %q", out)
	}
}

// In a real child, whatever way its writes cut a value (one byte per
// write, split across stdout and stderr writes), the output is the
// scrubbed whole text on each stream, and the exit status still passes.
func TestRunMaskSplitWrites(t *testing.T) {
	const value = "s3cr3t-Value-9q"
	var script strings.Builder
	script.WriteString("printf 'out: '; ")
	for i := range len(value) {
		fmt.Fprintf(&script, "printf %%s '%c'; printf %%s '%c' >&2; ", value[i], value[i])
	}
	script.WriteString(`printf ' end\n'; printf '%s' "$K" | base64 >&2; exit 7`)
	cmd, err := Command([]string{"sh", "-c", script.String()})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	st, err := Run(cmd, Child{Environ: []string{"PATH=" + os.Getenv("PATH")}, Secrets: mats("K", value), Stdout: &out, Stderr: &errb})
	if err != nil || st != 7 {
		t.Fatalf("Run = %d, %v; want 7", st, err)
	}
	if got, want := out.String(), "out: <redacted:K> end\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	// The raw value and its base64 touch across the line: one placeholder.
	if got, want := errb.String(), "<redacted:K>\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}
