package opstest

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// FillVersions writes n names, app/key-00000 on, into the file vault of
// env "default", each put versions times with a random value (one batch a
// round), and returns the names: the vault a benchmark of history reads.
func (f *Fixture) FillVersions(tb testing.TB, n, versions int) []string {
	tb.Helper()
	_, vc, err := f.Config.VaultFor("default")
	if err != nil {
		tb.Fatal(err)
	}
	st, err := file.Open(vc.Path, vc.Identity, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app/key-%05d", i)
	}
	for range versions {
		ws := make(vault.Writes, n)
		for i, name := range names {
			ws[i] = vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(rand.Text()))}
		}
		if _, err := st.ApplyBatch(context.Background(), ws, func([]vault.Meta) error { return nil }); err != nil {
			tb.Fatal(err)
		}
	}
	return names
}
