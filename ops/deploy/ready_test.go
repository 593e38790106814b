package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file of another user in a sticky directory (as in /tmp) cannot be
// replaced by a rename: ready says so before anything is written. Its
// owner, the directory's owner and root may replace it.
func TestReadyStickyDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	me := uint32(os.Geteuid()) // owns both the directory and the file
	other := me + 1000
	if other == 0 {
		other = 1
	}
	err = replaceable(dir, fi, out, other)
	if err == nil || !strings.Contains(err.Error(), "cannot replace "+out+": it belongs to another user, in a sticky directory") {
		t.Errorf("another user: %v; want the sticky refusal", err)
	}
	for _, uid := range []uint32{me, 0} {
		if err := replaceable(dir, fi, out, uid); err != nil {
			t.Errorf("uid %d: %v; want nil", uid, err)
		}
	}
	// Without the sticky bit anyone who may write the directory may
	// replace the file.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if fi, err = os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := replaceable(dir, fi, out, other); err != nil {
		t.Errorf("not sticky: %v; want nil", err)
	}
}
