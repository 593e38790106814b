package client

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoVault: an embedder that links the client links no vault and
// no age: Secret comes from vault/secret, which is standard library only.
func TestLinksNoVault(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/arca-secrets/arca/vault/secret") {
		t.Fatalf("go list -deps does not list vault/secret: %q", deps)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "filippo.io/age") || p == "github.com/arca-secrets/arca/vault" {
			t.Errorf("the client links %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "../../vault/secret").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, ".") && p != "github.com/arca-secrets/arca/vault/secret" {
			t.Errorf("vault/secret imports %s, outside the standard library", p)
		}
	}
}
