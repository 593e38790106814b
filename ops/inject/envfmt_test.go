package inject

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// hostileValues are values that break naive quoting. Each is written by
// FormatEnv and read back by a real reader, byte for byte.
var hostileValues = map[string]string{
	"single quote":        "it's",
	"only quotes":         `''"'"`,
	"quote escape":        `'\''`,
	"double quotes":       `say "hi"`,
	"command subst":       "$(touch pwned-subst)",
	"backticks":           "`touch pwned-tick`",
	"break out":           "'; touch pwned-break; '",
	"break out double":    `"; touch pwned-dq; "`,
	"dollar vars":         "$HOME ${HOME} $1 $$ $? ${X:-y}",
	"backslashes":         `a\b\\c\n\t\'`,
	"trailing backslash":  `ends in \`,
	"newlines":            "line1\nline2\n\nline4",
	"trailing newline":    "value\n",
	"only newlines":       "\n\n",
	"crlf":                "windows\r\nline\r\n",
	"lone cr":             "a\rb",
	"tab":                 "a\tb\t",
	"unicode":             "zwölf ✓ 秘密 🔑",
	"spaces":              "  padded  ",
	"hash":                "#not a comment # x",
	"equals":              "=a==b=",
	"glob":                "* ? [a-z]",
	"dash":                "-n",
	"semicolons and amps": "a; b && c || d & e | f > /dev/null",
	"control bytes":       "bell\x07 esc\x1b[31m del\x7f",
	"html":                "<script>&amp;</script>",
}

func hostileVars() []Materialized {
	var vars []Materialized
	for _, name := range slices.Sorted(maps.Keys(hostileValues)) {
		vars = append(vars, Materialized{Name: varName(name), Value: secret(hostileValues[name])})
	}
	return vars
}

// varName turns a table row name into a variable name.
func varName(s string) string {
	return "V_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return '_'
	}, s)
}

func format(t *testing.T, f string, vars []Materialized) string {
	t.Helper()
	var b bytes.Buffer
	if err := FormatEnv(&b, f, vars); err != nil {
		t.Fatalf("FormatEnv(%s): %v", f, err)
	}
	return b.String()
}

func TestFormatEnvExact(t *testing.T) {
	vars := mats("A", "plain", "B", "it's", "C", "two\nlines\r\n", "D", `q"b\s$x<&>`, "E", "")
	for _, c := range []struct{ format, want string }{
		{"sh", "export A='plain'\n" +
			"export B='it'\\''s'\n" +
			"export C='two\nlines\r\n'\n" +
			"export D='q\"b\\s$x<&>'\n" +
			"export E=''\n"},
		{"dotenv", "A=\"plain\"\n" +
			"B=\"it's\"\n" +
			"C=\"two\\nlines\\r\\n\"\n" +
			"D=\"q\\\"b\\\\s$x<&>\"\n" +
			"E=\"\"\n"},
		{"json", `{"A":"plain","B":"it's","C":"two\nlines\r\n","D":"q\"b\\s$x<&>","E":""}` + "\n"},
	} {
		if got := format(t, c.format, vars); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.format, got, c.want)
		}
	}
	// Nothing to print: nothing for sh and dotenv, an empty object for json.
	for f, want := range map[string]string{"sh": "", "dotenv": "", "json": "{}\n"} {
		if got := format(t, f, nil); got != want {
			t.Errorf("%s of nothing = %q, want %q", f, got, want)
		}
	}
}

func TestFormatEnvRefuses(t *testing.T) {
	var b bytes.Buffer
	err := FormatEnv(&b, "yaml", mats("A", "v"))
	if ops.CodeOf(err) != manifest.BadRequest || !strings.Contains(err.Error(), `unknown format "yaml" (one of: sh, dotenv, json)`) {
		t.Errorf("unknown format: %v", err)
	}
	// A name is code in sh: one that is not a plain variable name is
	// refused whatever the caller checked before.
	for _, name := range []string{"", "A;touch x", "A B", "1A", "A=B", "$(x)", "ARCA_ENV"} {
		for _, f := range EnvFormats() {
			b.Reset()
			err := FormatEnv(&b, f, []Materialized{{Name: "OK", Value: secret("v")}, {Name: name, Value: secret(canary)}})
			if ops.CodeOf(err) != manifest.BadRequest || b.Len() != 0 || strings.Contains(err.Error(), canary) {
				t.Errorf("%s with name %q: %v, wrote %q", f, name, err, b.String())
			}
		}
	}
}

// sh output survives eval by every POSIX shell on the machine: each value
// comes back byte for byte, exported, and nothing in a value runs.
func TestFormatEnvShRoundTrip(t *testing.T) {
	vars := hostileVars()
	out := format(t, "sh", vars)
	shells := 0
	for _, sh := range []string{"sh", "dash", "bash", "ksh", "mksh", "zsh", "busybox"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		shells++
		dir := t.TempDir()
		file := filepath.Join(dir, "env.sh")
		if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		// The child prints each variable as it sees it in its environment
		// (so export is checked too), NUL-terminated.
		script := `eval "$(cat "$1")" || exit 99; shift; for n in "$@"; do printenv "$n"; printf '\0'; done`
		args := []string{"-c", script, "sh", file}
		if sh == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		for _, v := range vars {
			args = append(args, v.Name)
		}
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		fields := strings.Split(string(got), "\x00")
		if len(fields) != len(vars)+1 {
			t.Fatalf("%s: %d values back, want %d", sh, len(fields)-1, len(vars))
		}
		for i, v := range vars {
			// printenv adds a newline after the value.
			if want := string(v.Value.Reveal()) + "\n"; fields[i] != want {
				t.Errorf("%s: %s came back %q, want %q", sh, v.Name, fields[i], want)
			}
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "pwned") {
				t.Errorf("%s: a value ran a command (%s exists)", sh, e.Name())
			}
		}
	}
	if shells == 0 {
		t.Fatal("no POSIX shell found")
	}
}

func TestFormatEnvJSONRoundTrip(t *testing.T) {
	vars := hostileVars()
	out := format(t, "json", vars)
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("json is not one line: %q", out)
	}
	if !strings.Contains(out, "<script>&amp;</script>") {
		t.Error("json escapes HTML characters")
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(vars) {
		t.Fatalf("%d keys, want %d", len(got), len(vars))
	}
	for _, v := range vars {
		if got[v.Name] != string(v.Value.Reveal()) {
			t.Errorf("%s came back %q, want %q", v.Name, got[v.Name], v.Value.Reveal())
		}
	}
}

// FormatEnv's doc shows one value in every format, in a code block, where
// gofmt leaves the bytes alone (in prose it turns two single quotes into a
// closing curly quote, and the sh escape with them). The block is the
// output, byte for byte, so the doc cannot drift from the code.
func TestFormatEnvDocExample(t *testing.T) {
	const value = `it's "a\b"`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "envfmt.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "FormatEnv" && fn.Doc != nil {
			text = fn.Doc.Text()
		}
	}
	if strings.ContainsAny(text, "“”") {
		t.Errorf("FormatEnv's doc has a curly quote: gofmt rewrote two quote characters in prose")
	}
	if !strings.Contains(text, "The value "+value+" of NAME") {
		t.Fatalf("FormatEnv's doc does not name the value %s", value)
	}
	var blocks []string
	for _, b := range new(comment.Parser).Parse(text).Content {
		if c, ok := b.(*comment.Code); ok {
			blocks = append(blocks, c.Text)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("FormatEnv's doc has %d code blocks, want 1", len(blocks))
	}
	var want strings.Builder
	for _, f := range EnvFormats() {
		want.WriteString(format(t, f, mats("NAME", value)))
	}
	if blocks[0] != want.String() {
		t.Errorf("FormatEnv's doc shows\n%s\nFormatEnv writes\n%s", blocks[0], want.String())
	}
}
