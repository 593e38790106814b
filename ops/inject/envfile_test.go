package inject

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// An env file's values are refs (arca://…, in any case) or literals taken
// as written; each entry says where it came from.
func TestParseEnvFile(t *testing.T) {
	data := "# settings\n" +
		"DB_PASSWORD=arca://app/db\n" +
		"export PINNED = \"arca://prod/app/db\"\n" +
		"UPPER=ARCA://app/db\n" +
		"PORT=8443 # a comment\n" +
		"GREETING='Hello, $USER {{x}}'\n" +
		"MULTI=\"a\\nb \\\"q\\\"\"\n" +
		"EMPTY=\n" +
		"URL=https://example.com/arca://x\n" +
		"lower_case=arca://app/db\n"
	got, err := ParseEnvFile("app.env", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Injection{
		{Name: "DB_PASSWORD", Ref: "arca://app/db", Where: "app.env: line 2"},
		{Name: "PINNED", Ref: "arca://prod/app/db", Where: "app.env: line 3"},
		{Name: "UPPER", Ref: "ARCA://app/db", Where: "app.env: line 4"},
		{Name: "PORT", Literal: true, Value: "8443", Where: "app.env: line 5"},
		{Name: "GREETING", Literal: true, Value: "Hello, $USER {{x}}", Where: "app.env: line 6"},
		{Name: "MULTI", Literal: true, Value: "a\nb \"q\"", Where: "app.env: line 7"},
		{Name: "EMPTY", Literal: true, Value: "", Where: "app.env: line 8"},
		{Name: "URL", Literal: true, Value: "https://example.com/arca://x", Where: "app.env: line 9"},
		{Name: "lower_case", Ref: "arca://app/db", Where: "app.env: line 10"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseEnvFile =\n%+v\nwant\n%+v", got, want)
	}
}

// Every failure names the file and the line, is bad_request and never
// carries a value.
func TestParseEnvFileRefusals(t *testing.T) {
	const value = "CANARY-envfile"
	loader := "the dynamic loader reads it when a program starts, so no secret is injected as it (use another name)"
	for _, c := range []struct{ name, data, msg string }{
		{"not an assignment", "OK=1\n" + value + "\n", "a.env: line 2: not an assignment NAME=value, a comment or a blank line"},
		{"twice", "A=1\nA=" + value + "\n", "a.env: line 2: A is also set on line 1"},
		{"unclosed quote", "A=1\nB=\"" + value + "\n", `a.env: line 2: B: the double quote opened on line 2 is not closed`},
		{"not a segment", "MY KEY=" + value + "\n", `a.env: line 1: the name before = is not a valid name`},
		{"not a variable name", "OK=1\n1X=" + value + "\n", `a.env: line 2: secret name "1X" is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`},
		{"dash", "DB-PASS=" + value + "\n", `a.env: line 1: secret name "DB-PASS" is not an environment variable name`},
		{"dot", "db.pass=" + value + "\n", `a.env: line 1: secret name "db.pass" is not an environment variable name`},
		{"start var literal", "LD_PRELOAD=" + value + "\n", "a.env: line 1: secret name LD_PRELOAD: " + loader},
		{"start var ref", "\n\nDYLD_INSERT_LIBRARIES=arca://app/db\n", "a.env: line 3: secret name DYLD_INSERT_LIBRARIES: " + loader},
		{"PATH", "PATH=/usr/bin\n", "a.env: line 1: secret name PATH: every program that runs another by name reads it"},
		{"reserved", "ARCA_CONFIG=/tmp/x.toml\n", "a.env: line 1: secret name ARCA_CONFIG: ARCA_* names are arca's own settings and are never injected"},
		{"NUL", "A=x\x00" + value + "\n", "a.env: line 1: A: the value has a NUL byte, which an environment variable cannot hold"},
		{"not UTF-8", "A=\xff" + value + "\n", "a.env: line 1: A: the value is not valid UTF-8"},
		{"1Password ref", "A=1\nDB=op://vault/" + value + "/password\n", "a.env: line 2: DB: a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)"},
		{"1Password ref, quoted, upper case", "DB=\"OP://vault/" + value + "\"\n", "a.env: line 1: DB: a 1Password reference (op://)"},
	} {
		got, err := ParseEnvFile("a.env", []byte(c.data))
		if ops.CodeOf(err) != manifest.BadRequest || !strings.HasPrefix(err.Error(), c.msg) || got != nil {
			t.Errorf("%s: %v, %v; want bad_request starting %q", c.name, got, err, c.msg)
			continue
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("%s: the message carries the value: %v", c.name, err)
		}
	}
}

func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.env")
	if err := os.WriteFile(p, []byte("A=arca://app/a\nB=b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvFile(p)
	if err != nil || len(got) != 2 || got[0].Where != p+": line 1" || got[1].Value != "b" {
		t.Fatalf("ReadEnvFile = %+v, %v", got, err)
	}
	big := filepath.Join(dir, "big.env")
	if err := os.WriteFile(big, []byte("A="+strings.Repeat("x", MaxEnvFile)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, msg := range map[string]string{
		filepath.Join(dir, "nope.env"): "env file " + filepath.Join(dir, "nope.env") + " does not exist",
		big:                            "env file " + big + " is larger than 1048576 bytes (1 MiB)",
		dir:                            "env file: " + dir + ": read " + dir + ": is a directory",
	} {
		if _, err := ReadEnvFile(path); ops.CodeOf(err) != manifest.BadRequest || err.Error() != msg {
			t.Errorf("%s: %v, want bad_request %q", path, err, msg)
		}
	}
}

// Each source takes the place of a same-named variable of those before
// it: arca's environment, then each env file in order, then the flags.
func TestMergePrecedence(t *testing.T) {
	environ := []string{"A=arca://env/a", "B=arca://env/b", "C=arca://env/c", "D=arca://env/d", "PLAIN=x"}
	first := []Injection{{Name: "B", Ref: "arca://first/b"}, {Name: "C", Ref: "arca://first/c"}, {Name: "E", Literal: true, Value: "first-e"}}
	second := []Injection{{Name: "C", Literal: true, Value: "second-c"}, {Name: "E", Ref: "arca://second/e"}}
	flags := []Injection{{Name: "D", Ref: "arca://flag/d"}, {Name: "B", Ref: "arca://flag/b", File: true}}
	got := Merge(environ, [][]Injection{first, second}, flags)
	want := []Injection{
		{Name: "A", Ref: "arca://env/a"},
		{Name: "B", Ref: "arca://flag/b", File: true},
		{Name: "C", Literal: true, Value: "second-c"},
		{Name: "D", Ref: "arca://flag/d"},
		{Name: "E", Ref: "arca://second/e"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Merge =\n%+v\nwant\n%+v", got, want)
	}
	// A name twice among the flags stays twice, for Materialize to refuse.
	got = Merge(nil, [][]Injection{first}, []Injection{{Name: "X", Ref: "arca://a/x"}, {Name: "X", Ref: "arca://b/x", File: true}})
	if len(got) != 5 || got[3].Name != "X" || got[4].Name != "X" || got[4].Ref != "arca://b/x" {
		t.Fatalf("Merge with a flag twice = %+v", got)
	}
}
