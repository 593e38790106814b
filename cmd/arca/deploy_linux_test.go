package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A target whose directory arca may not create files in stops arca
// deploy before any file is written, naming the target and the
// directory. arca runs without capabilities (nocaps), so that root too
// is held to the directory's mode.
func TestDeployUnwritableDirectory(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/db", []byte("v"))
	ro := filepath.Join(h.dir, "ro")
	cfg := filepath.Join(h.dir, "deploy.toml")
	for name, content := range map[string]string{
		"t.tmpl":      "pw={{ arca://app/db }}\n",
		"deploy.toml": "[[deploy]]\nname = \"first\"\ntemplate = \"t.tmpl\"\nout = \"first.conf\"\n[[deploy]]\nname = \"last\"\ntemplate = \"t.tmpl\"\nout = \"ro/last.conf\"\n",
	} {
		if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	out, st, stderr := h.status(t, nil, "nocaps", "arca", "--config", cfg, "deploy")
	want := "arca: target last (" + ro + "/last.conf): cannot create files in directory " + ro + " (permission denied); nothing was written\n"
	if st != 1 || len(out) != 0 || stderr != want {
		t.Errorf("arca deploy: exit %d, stdout %q, stderr %q; want 1, nothing, and %q", st, out, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "first.conf")); !os.IsNotExist(err) {
		t.Errorf("the first target was written (%v)", err)
	}
}
