package main

import (
	"strings"
	"testing"
	"time"
)

// TestDocUsage: every line of a block marked <!-- usage --> is the usage
// of a verb or sub-verb, as its help prints it (runs of spaces aside), so
// a doc cannot list a flag the verb lacks or miss one it has.
func TestDocUsage(t *testing.T) {
	c := &cli{now: time.Now}
	usages := map[string]bool{}
	for _, name := range helpNames() {
		for _, l := range strings.Split(c.helpOf(name), "\n") {
			if u, ok := strings.CutPrefix(l, "usage: "); ok {
				usages[squeeze(u)] = true
			} else if strings.HasPrefix(l, "       arca ") {
				usages[squeeze(l)] = true
			}
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
			for i, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
				checked++
				if !usages[squeeze(l)] {
					t.Errorf("%s:%d: %q is no verb's usage as its help prints it", b.doc, b.line+1+i, l)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no usage lines found in the docs")
	}
}

// squeeze collapses runs of spaces, and trims the line.
func squeeze(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
