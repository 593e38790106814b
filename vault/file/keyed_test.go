package file_test

import (
	"testing"

	"github.com/arca-secrets/arca/vault/file"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// TestFileTeam runs the team scenario on the file vault.
func TestFileTeam(t *testing.T) {
	v := newFileVault(t)
	vaulttest.Team(t, v.idPath, func(t *testing.T, identity string) vaulttest.KeyedStore {
		f, err := file.Open(v.path, identity, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	})
}
