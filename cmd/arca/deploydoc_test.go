package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// A Kubernetes Secret the docs' examples render holds the value that was
// stored, not a newline after it: a value is stored with printf %s, not
// from a file whose last line ends in one.
func TestDocSecretsHoldNoNewline(t *testing.T) {
	found := 0
	for _, b := range markedBlocks(t, "example") {
		inData := false
		for i, l := range strings.Split(b.body, "\n") {
			switch {
			case l == "data:":
				inData = true
				continue
			case !strings.HasPrefix(l, "  "):
				inData = false
			}
			if !inData {
				continue
			}
			key, v, _ := strings.Cut(strings.TrimSpace(l), ": ")
			value, err := base64.StdEncoding.DecodeString(v)
			found++
			switch {
			case err != nil:
				t.Errorf("%s:%d: data %s is not base64: %q", b.doc, b.line+1+i, key, v)
			case strings.HasSuffix(string(value), "\n"):
				t.Errorf("%s:%d: data %s holds %q, a value with a newline after it", b.doc, b.line+1+i, key, value)
			}
		}
	}
	if found == 0 {
		t.Fatal("no Kubernetes Secret data found in the docs' examples")
	}
}
