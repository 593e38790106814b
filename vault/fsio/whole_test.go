package fsio

import (
	"os"
	"path/filepath"
	"testing"
)

// Both writers leave the file whole with its mode and no temp file beside
// it; the locked one writes over a temp file a killed writer left, and
// never through a link planted at the temp file's name.
func TestWriteWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, w := range []struct {
		name  string
		write func(string, []byte, os.FileMode) error
	}{{"WriteWhole", WriteWhole}, {"WriteWholeLocked", WriteWholeLocked}} {
		name, write := w.name, w.write
		if err := os.WriteFile(path+".tmp", []byte("debris of a killed writer"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := write(path, []byte(name), 0o640); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if err != nil || string(got) != name || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %q %v, mode %v", name, got, err, fi.Mode())
		}
		ents, _ := os.ReadDir(dir)
		if name == "WriteWholeLocked" && len(ents) != 1 {
			t.Errorf("%s left %d files beside f", name, len(ents)-1)
		}
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := WriteWholeLocked(path, []byte("new"), 0o600); err == nil {
		t.Error("WriteWholeLocked wrote through a link at its temp file's name")
	}
	if got, _ := os.ReadFile(victim); string(got) != "kept" {
		t.Errorf("the link's target now holds %q", got)
	}
	if got, _ := os.ReadFile(path); string(got) != "WriteWholeLocked" {
		t.Errorf("a failed write changed f: %q", got)
	}
}
