package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDocShellFiles: a shell script the docs mark as a file (a recipe
// that runs against a proxy, say) is one sh can parse.
func TestDocShellFiles(t *testing.T) {
	n := 0
	for _, b := range markedBlocks(t, "file") {
		if !strings.HasSuffix(b.arg, ".sh") {
			continue
		}
		n++
		out, err := exec.Command("sh", "-n", "-c", b.body).CombinedOutput()
		if err != nil {
			t.Errorf("%s:%d: %s does not parse: %v\n%s", b.doc, b.line, b.arg, err, out)
		}
	}
	if n == 0 {
		t.Fatal("no shell file found in the docs")
	}
	if exec.Command("sh", "-n", "-c", "if then").Run() == nil {
		t.Fatal("sh -n accepts a script that does not parse")
	}
}
