package fsio

import (
	"os"
	"path/filepath"
	"testing"
)

// Dangling names where a link, or a chain of links, stops leading
// anywhere; a link that leads to a file, a loop and a plain path are not
// dangling.
func TestDangling(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	link := func(to, name string) {
		if err := os.Symlink(to, at(name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(at("file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link("gone", "direct")
	link("l2", "chain")
	link(at("l3"), "l2")
	link("nowhere", "l3")
	link("file", "ok")
	link("ok", "ok2")
	link("loop2", "loop1")
	link("loop1", "loop2")
	for _, tc := range []struct {
		name, want string
		dangling   bool
	}{
		{"direct", "a symlink to gone, which does not exist", true},
		{"chain", "a symlink to l2, a chain of links that ends at nowhere, which does not exist", true},
		{"ok", "", false},
		{"ok2", "", false},
		{"loop1", "", false},
		{"file", "", false},
		{"absent", "", false},
	} {
		got, dangling := Dangling(at(tc.name))
		if got != tc.want || dangling != tc.dangling {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, dangling, tc.want, tc.dangling)
		}
	}
}
