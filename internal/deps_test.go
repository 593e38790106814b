// Package internal holds the standard-library-only leaves several rooms
// share; its test holds the house's imports to their direction.
package internal

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/arca-secrets/arca/"

// deps lists what the packages given (relative to the module root) link,
// as go list -f prints each.
func deps(t *testing.T, format string, pkgs ...string) []string {
	t.Helper()
	args := []string{"list", "-deps", "-f", format}
	for _, p := range pkgs {
		args = append(args, "../"+strings.TrimPrefix(p, "./"))
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkgs, err)
	}
	ds := strings.Fields(string(out))
	if len(ds) == 0 {
		t.Fatalf("go list -deps %s listed nothing", pkgs)
	}
	return ds
}

// TestNothingImportsUpTheHouse: a leaf under internal/ links only the
// standard library (and other leaves), and audit and pdp, which never see
// a secret value, link nothing of the module but themselves and the
// leaves: no ops, no vault, no serve.
func TestNothingImportsUpTheHouse(t *testing.T) {
	for _, tc := range []struct {
		pkgs    string
		allowed []string // the module's packages they may link, and those beneath them
	}{
		{"./internal/...", []string{"internal"}},
		{"./audit/...", []string{"internal", "audit"}},
		{"./pdp/...", []string{"internal", "pdp"}},
	} {
		for _, p := range deps(t, "{{if not .Standard}}{{.ImportPath}}{{end}}", tc.pkgs) {
			rel, ours := strings.CutPrefix(p, module)
			switch {
			case !ours:
				t.Errorf("%s links %s, which is not the standard library", tc.pkgs, p)
			case !allowed(rel, tc.allowed):
				t.Errorf("%s links %s, a package above it", tc.pkgs, p)
			}
		}
	}
}

func allowed(rel string, trees []string) bool {
	for _, a := range trees {
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return true
		}
	}
	return false
}

// TestLauncherLinksNoTesting: the etcd launcher the tests share with
// bench/bulk and bench/scale, programs, links no testing code.
func TestLauncherLinksNoTesting(t *testing.T) {
	all := deps(t, "{{.ImportPath}}", "./vault/etcd/etcdtest/launch", "./bench/bulk", "./bench/scale")
	if len(all) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(all))
	}
	for _, p := range all {
		if p == "testing" || strings.HasPrefix(p, "testing/") || strings.HasSuffix(p, "/etcdtest") {
			t.Errorf("the launcher, bench/bulk or bench/scale links %s", p)
		}
	}
}
