package secretfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

func expandEnv(name string) (string, bool) {
	v, ok := map[string]string{"HOME": "/home/ana", "EMPTY": "", "USER": "ana"}[name]
	return v, ok
}

func parseExpand(t *testing.T, in string) (map[string]string, error) {
	t.Helper()
	es, _, err := Parse([]byte(in), "dotenv", Options{Expand: true, Lookup: expandEnv})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range es {
		out[e.Name] = string(e.Value.Reveal())
		if e.Refs {
			t.Errorf("%s: Refs set with Expand", e.Name)
		}
	}
	return out, nil
}

// The interpolation rules of docs/migrate.md#expand, one row each.
func TestExpand(t *testing.T) {
	for _, tc := range []struct{ in, key, want string }{
		{"A=$HOME/x", "A", "/home/ana/x"},
		{"A=${HOME}x", "A", "/home/anax"},
		{`A="${USER}@$HOME"`, "A", "ana@/home/ana"},
		{"A='$HOME ${USER}'", "A", "$HOME ${USER}"},   // single quotes: literal
		{`A="\$HOME \${USER}"`, "A", "$HOME ${USER}"}, // \$ in double quotes
		{`A=\$HOME`, "A", "$HOME"},                    // \$ unquoted
		{"A=${NOPE:-dflt}", "A", "dflt"},              // unset: default
		{"A=${EMPTY:-dflt}", "A", "dflt"},             // empty, with :-
		{"A=${EMPTY-dflt}", "A", ""},                  // empty, with -: empty
		{"A=${NOPE-dflt}", "A", "dflt"},               // unset, with -
		{"A=${NOPE:-$HOME}", "A", "$HOME"},            // a default is not expanded
		{"A=$1 $$ $ end$", "A", "$1 $$ $ end$"},       // a $ that starts nothing
		{"B=base\nA=${B}/more", "A", "base/more"},     // an earlier key
		{"HOME=mine\nA=$HOME", "A", "mine"},           // an earlier key wins over the environment
		{"B='$USER'\nA=${B}", "A", "$USER"},           // one pass: not expanded again
		{"B=$USER\nA=${B}${B}", "A", "anaana"},        // the earlier value, expanded
		{"A=x # ${NOPE} in a comment", "A", "x"},      // a comment is not a value
		{"A=pa$$word", "A", "pa$$word"},               // $$ is not an escape
		{"A=${HOME_X:-}", "A", ""},                    // an empty default
		{"A=$HOME_DIR", "A", "x"},                     // the longest name: HOME_DIR is set below
	} {
		in := tc.in
		if tc.key == "A" && strings.Contains(in, "HOME_DIR") {
			in = "HOME_DIR=x\n" + in
		}
		got, err := parseExpand(t, in)
		if err != nil || got[tc.key] != tc.want {
			t.Errorf("%q: %s = %q, %v; want %q", tc.in, tc.key, got[tc.key], err, tc.want)
		}
	}
}

// Every refusal names the line and the key, and the variable, never a value.
func TestExpandRefused(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A=$NOPE", "line 1: A: reference 1 of the value names a variable that is neither a key before it in the file nor set in the environment, where ARCA_* settings and cloud credentials count as unset (${NAME:-default} gives a default)"},
		{"A=x\nB=$HOME${NOPE}", "line 2: B: reference 2 of the value names a variable that is neither"},
		{"A=${B}\nB=x", "line 1: A: reference 1 of the value names"}, // a later key is not an earlier one
		{"A=${HOME", "line 1: A: reference 1 of the value: ${ is not closed"},
		{"A=${}", "line 1: A: reference 1 of the value: ${...} does not start with a variable name"},
		{"A=$HOME${1X}", "line 1: A: reference 2 of the value: ${...} does not start with a variable name"},
		{"A=${HOME:?no}", "line 1: A: reference 1 of the value: only ${NAME}, ${NAME:-default} and ${NAME-default} are expanded"},
		{"A=pa$sw0rd", "line 1: A: reference 1 of the value names"}, // the name, text of a value, is not shown
	} {
		_, err := parseExpand(t, tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "/home/ana") || strings.Contains(err.Error(), "sw0rd") || strings.Contains(err.Error(), "NOPE")) {
			t.Errorf("%q: the error shows a value: %v", tc.in, err)
		}
	}
	// Expansion is bounded: a value that names a large one many times.
	big := strings.Repeat("x", manifest.MaxValue/2+1)
	_, err := parseExpand(t, "B="+big+"\nA=${B}${B}")
	if err == nil || !strings.Contains(err.Error(), "line 2: A: the value is larger than 65536 bytes (64 KiB) once expanded") {
		t.Errorf("doubling: %v", err)
	}
	// Expansion is bounded in all, not only a value at a time: a large
	// value named on many lines refuses the input once the values expanded
	// reach MaxInput, however small the file (here 85 KB); the lines before
	// that one expanded.
	var lines strings.Builder
	lines.WriteString("A=" + strings.Repeat("x", 60_000) + "\n")
	for i := range 1200 {
		fmt.Fprintf(&lines, "B%d=$A\n", i)
	}
	_, err = parseExpand(t, lines.String())
	if err == nil || !strings.Contains(err.Error(), "line 1119: B1117: the values expand to more than 67108864 bytes (64 MiB) in all") {
		t.Errorf("a value named on many lines: %v", err)
	}
	// Many escapes and many dollars: linear, not quadratic.
	many := `A="` + strings.Repeat(`\$x$`, 200_000) + `"`
	if _, _, err := Parse([]byte(many), "dotenv", Options{Expand: true, Lookup: expandEnv}); err == nil {
		t.Error("a 1 MB value passed")
	}
	if _, _, err := Parse([]byte(`{"A":"$X"}`), "json", Options{Expand: true}); err == nil || !strings.Contains(err.Error(), "dotenv input only") {
		t.Errorf("--expand of json: %v", err)
	}
}

// Without Expand, nothing is expanded, and Refs marks the values a dotenv
// reader would expand.
func TestRefsMarked(t *testing.T) {
	es, _, err := Parse([]byte("A=$HOME\nB='${X}'\nC=\"\\${X}\"\nD=\"${X}\"\nE=plain\nF=\\$X\nG=${bad\nH=$1\n"), "dotenv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, e := range es {
		if e.Refs {
			marked = append(marked, e.Name)
		}
	}
	if strings.Join(marked, ",") != "A,D,G" {
		t.Fatalf("Refs on %v, want A,D,G", marked)
	}
	if v := string(es[0].Value.Reveal()); v != "$HOME" {
		t.Fatalf("A = %q", v)
	}
}

// A sops-encrypted input is refused in every format sops writes.
func TestSopsEncrypted(t *testing.T) {
	for format, in := range map[string]string{
		"dotenv":      "DB=ENC[AES256_GCM,data:Tr7o,iv:x,tag:y,type:str]\nsops_version=3.9.0\n",
		"sops-dotenv": "DB=ENC[AES256_GCM,data:Tr7o,iv:x,tag:y,type:str]\n",
		"yaml":        "db:\n  password: ENC[AES256_GCM,data:Tr7o,iv:x,tag:y,type:str]\nsops:\n  mac: x\n",
		"json":        `{"db": "ENC[AES256_GCM,data:Tr7o,iv:x,tag:y,type:str]", "sops": {"mac": "x"}}`,
	} {
		if _, _, err := Parse([]byte(in), format, Options{}); !errors.Is(err, ErrSopsEncrypted) {
			t.Errorf("%s: %v, want ErrSopsEncrypted", format, err)
		}
	}
	for _, in := range []string{"sops:\n  kms: []\n", "{\"sops\": {\"mac\": \"m\", \"lastmodified\": \"t\"}}", "sops_mac=x\n"} {
		if !sopsEncrypted([]byte(in)) {
			t.Errorf("%q: not seen as sops-encrypted", in)
		}
	}
	for _, in := range []string{"A=ENC[x]\n", "sops: x\n", "NOT_sops_mac=x\n", `{"sops": "x"}`} {
		if sopsEncrypted([]byte(in)) {
			t.Errorf("%q: seen as sops-encrypted", in)
		}
	}
}
