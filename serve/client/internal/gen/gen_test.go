package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGenerated: ops_gen.go is what the generator writes from today's op
// table; run `go generate ./serve/client` when it is not.
func TestGenerated(t *testing.T) {
	dir := filepath.Join("..", "..")
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, target))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the generator writes: run go generate ./serve/client", target)
	}
}
