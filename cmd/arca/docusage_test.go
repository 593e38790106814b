package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDocUsage: a block marked <!-- usage --> holds usage lines of verbs
// and sub-verbs, and between them its lines for a verb give exactly the
// flags that verb's help gives (a doc may order them, name their values
// and split a verb into forms as it likes), so a doc cannot list a flag
// the verb lacks or miss one it has.
func TestDocUsage(t *testing.T) {
	c := &cli{now: time.Now}
	helps := map[string][]string{} // verb → its flags, as its help gives them
	for _, name := range helpNames() {
		for _, l := range strings.Split(c.helpOf(name), "\n") {
			if u, ok := strings.CutPrefix(l, "usage: "); ok {
				l = u
			} else if !strings.HasPrefix(l, "       arca ") {
				continue
			}
			verb, flags := usageOf(l)
			helps[verb] = slices.Compact(slices.Sorted(slices.Values(append(helps[verb], flags...))))
		}
	}
	checked := 0
	for _, doc := range docFiles(t) {
		blocks, err := readBlocks(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.kind != "usage" {
				continue
			}
			shown := map[string][]string{}
			for _, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
				verb, flags := usageOf(l)
				shown[verb] = append(shown[verb], flags...)
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
	}
	if checked == 0 {
		t.Fatal("no usage lines found in the docs")
	}
}

// usageOf is what a usage line says: its verb (the words before the first
// flag or argument) and its flags.
func usageOf(line string) (string, []string) {
	var verb, flags []string
	for _, w := range strings.Fields(line) {
		if len(flags) == 0 && w[0] >= 'a' && w[0] <= 'z' && !strings.Contains(w, "|") {
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
