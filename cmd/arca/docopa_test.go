package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// docOPAVar names the variable that holds the URL of the OPA server the
// docs' serve sessions ask (http://127.0.0.1:PORT): a doc's config shows
// http://127.0.0.1:8181, and the session's mark puts this URL in its
// place before serve starts.
const docOPAVar = "DOC_OPA"

// docOPA starts, for the length of t, `opa run --server` on a free
// loopback port with every Rego file the docs mark (<!-- file: NAME.rego
// -->), and returns its URL: each policy answers at the path of its
// package, /v1/data/arca/… .
func docOPA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	n := 0
	for _, b := range markedBlocks(t, "file") {
		if !strings.HasSuffix(b.arg, ".rego") {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(b.arg))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.body), 0o600); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("the docs mark no Rego file")
	}
	addr := pdptest.FreeAddr(t)
	pdptest.StartOPAServer(t, addr, dir)
	return "http://" + addr
}
