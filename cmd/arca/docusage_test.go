package main

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocUsage: a block marked <!-- usage --> holds usage lines of verbs
// and sub-verbs, and between them its lines for a verb give exactly the
// flags that verb's help gives (a doc may order them, name their values
// and split a verb into forms as it likes), so a doc cannot list a flag
// the verb lacks or miss one it has.
func TestDocUsage(t *testing.T) {
	helps := map[string][]string{} // verb → its flags, as its help gives them
	var names []string
	commands().walk(func(name string, cmd *command) {
		names = append(names, name)
		for _, l := range strings.Split(helpOf(name, cmd), "\n") {
			if u, ok := strings.CutPrefix(l, "usage: "); ok {
				l = u
			} else if !strings.HasPrefix(l, "       arca ") {
				continue
			}
			verb, flags := usageOf(l)
			helps[verb] = slices.Compact(slices.Sorted(slices.Values(append(helps[verb], flags...))))
		}
	})
	checked := 0
	synopsis := true // the first usage block of cli.md names every verb (vault by its sub-verbs)
	for _, b := range markedBlocks(t, "usage") {
		shown := map[string][]string{}
		for _, l := range usageLines(b.body) {
			verb, flags := usageOf(l)
			shown[verb] = append(shown[verb], flags...)
		}
		if synopsis && strings.HasSuffix(b.doc, "/cli.md") {
			synopsis = false
			for _, name := range names {
				if _, ok := shown["arca "+name]; !ok && name != "vault" && name != "vault recipients" {
					t.Errorf("%s:%d: the synopsis lacks arca %s", b.doc, b.line, name)
				}
			}
		}
		for _, verb := range slices.Sorted(maps.Keys(shown)) {
			checked++
			got := slices.Compact(slices.Sorted(slices.Values(shown[verb])))
			want, ok := helps[verb]
			switch {
			case !ok:
				t.Errorf("%s:%d: %q is no verb", b.doc, b.line, verb)
			case !slices.Equal(got, want):
				t.Errorf("%s:%d: %s has the flags %v, the doc shows %v", b.doc, b.line, verb, want, got)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no usage lines found in the docs")
	}
}

// usageOf is what a usage line says: its verb (its first words, up to one
// that is not a word of lower-case letters) and its flags, up to a "(",
// which starts a remark.
func usageOf(line string) (string, []string) {
	line, _, _ = strings.Cut(line, "(")
	var verb, flags []string
	inVerb := true
	for _, w := range strings.Fields(line) {
		if inVerb = inVerb && verbWord.MatchString(w); inVerb {
			verb = append(verb, w)
		}
		for _, f := range strings.Split(strings.Trim(w, "[]."), "|") {
			if f = strings.Trim(f, "[]."); strings.HasPrefix(f, "--") {
				flags = append(flags, f)
			}
		}
	}
	return strings.Join(verb, " "), flags
}

// verbWord is a word of a verb's name.
var verbWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// usageLines are the lines of a usage block, a line that starts with a
// space joined to the one before it.
func usageLines(body string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if strings.HasPrefix(l, " ") && len(lines) > 0 {
			lines[len(lines)-1] += l
			continue
		}
		lines = append(lines, l)
	}
	return lines
}
