package startvars

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The table of docs/cli.md#names-that-are-never-injected is the list the
// code refuses: every pattern of the code is named in its reader's row,
// and every name a row shows is refused, as read by that reader.
func TestStartupNamesMatchTheDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n#### Names that are never injected\n")
	if !ok {
		t.Fatal("cli.md has no section \"Names that are never injected\"")
	}
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end] // the section ends at the next heading
	}
	rows := map[string][]string{}
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 2 || !strings.HasPrefix(cells[0], "| ") || cells[0] == "| read by" {
			continue
		}
		reader := strings.TrimPrefix(cells[0], "| ")
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			rows[reader] = append(rows[reader], m[1])
		}
	}
	readers := Readers()
	if len(rows) != len(readers) {
		t.Errorf("cli.md's table has %d readers, the code %d", len(rows), len(readers))
	}
	for _, r := range readers {
		shown, ok := rows[r.Reader]
		if !ok {
			t.Errorf("cli.md's table has no row for %q", r.Reader)
			continue
		}
		for _, p := range r.Names {
			if !slices.Contains(shown, p) {
				t.Errorf("cli.md's row %q does not name %s", r.Reader, p)
			}
		}
		for _, name := range shown {
			// A pattern stands for itself and one name it matches.
			example := strings.TrimSuffix(strings.TrimSuffix(name, "*"), "…") + "X"
			if strings.HasSuffix(name, "*") || strings.HasSuffix(name, "…") {
				name = example
			}
			if got := Reader(name); got != r.Reader {
				t.Errorf("cli.md's row %q names %s, but Reader says %q", r.Reader, name, got)
			}
		}
	}
}

func TestCovers(t *testing.T) {
	for prefix, want := range map[string]string{
		"LD_": "the dynamic loader", "LD_PRE": "the dynamic loader", "DYLD_X": "the dynamic loader",
		"PYTHONX": "a language runtime", "LC_": "the C library", "LUA_INIT_": "a language runtime",
		"PYTHON": "", "L": "", "LD": "", "NODE_": "", "PATH": "",
	} {
		if got := Covers(prefix); got != want {
			t.Errorf("Covers(%q) = %q, want %q", prefix, got, want)
		}
	}
}
