package allowenv

import "testing"

func TestAllowed(t *testing.T) {
	for name, want := range map[string]bool{
		"PATH": true, "LC_ALL": true, "TMPDIR": true,
		"path": false, "LC": false, "PATHX": false, "ARCA_IDENTITY_KEY": false, "AWS_SECRET_ACCESS_KEY": false, "LD_PRELOAD": false, "": false,
	} {
		if got := Allowed(name); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", name, got, want)
		}
	}
	if got := Filter([]string{"HOME=/h", "HOME", "X=1", "LC_TIME=C"}); len(got) != 2 || got[0] != "HOME=/h" || got[1] != "LC_TIME=C" {
		t.Errorf("Filter = %q", got)
	}
}
