package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sourceMark says the next fenced block of a doc is a file of the
// repository, whole: <!-- source: PATH -->, PATH from the repository root.
// The file is run by its own package's tests (the Go example by
// serve/client's, the others by npm test and unittest), so a doc that shows
// it cannot drift from a program that runs.
var sourceMark = regexp.MustCompile(`^<!-- source: ([A-Za-z0-9._/-]+) -->$`)

// TestDocSources: every block marked as a source is the file, byte for
// byte, and each marked file exists.
func TestDocSources(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	sources := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		path := ""
		for line := 1; sc.Scan(); line++ {
			text := sc.Text()
			switch {
			case sourceMark.MatchString(text):
				path = sourceMark.FindStringSubmatch(text)[1]
			case path != "" && strings.HasPrefix(text, "```"):
				block, read := fencedBlock(sc)
				want, err := os.ReadFile(filepath.Join("../..", path))
				switch {
				case err != nil:
					t.Errorf("%s:%d: %v", doc, line, err)
				case block != string(want):
					t.Errorf("%s:%d: the block differs from %s:\n--- the doc shows\n%s--- the file is\n%s", doc, line, path, block, want)
				}
				sources++
				line += read
				path = ""
			}
		}
	}
	if sources == 0 {
		t.Fatal("no doc shows a source file")
	}
}
