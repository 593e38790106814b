package vaulttest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// KeyedStore is a backend whose data key can be rewrapped and replaced.
type KeyedStore interface {
	vault.Store
	vault.Keyed
}

// Team is the team scenario every vault.Keyed backend passes: a teammate added can open the vault and read what was written
// before; a change from a stale list of recipients is refused; once
// removed and rekeyed, the teammate's identity opens nothing, while the
// owner reads every record as it was.
func Team(t *testing.T, ownerID string, open func(t *testing.T, identity string) KeyedStore) {
	ctx := context.Background()
	owner := open(t, ownerID)
	for _, name := range []string{"app/db", "app/api"} {
		w := vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte("before-" + name))}
		if _, err := owner.Apply(ctx, w, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	mateID := filepath.Join(t.TempDir(), "mate.txt")
	mateKey, _, err := identity.Ensure(mateID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	own, err := owner.Recipients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	both := append(slices.Clone(own), mateKey)
	if err := owner.SetRecipients(ctx, both, ParseRecipients(t, own)); err == nil || !strings.Contains(err.Error(), "changed since they were read") {
		t.Fatalf("SetRecipients from a list that is not the current one: %v", err)
	}
	if err := owner.SetRecipients(ctx, own, ParseRecipients(t, both)); err != nil {
		t.Fatal(err)
	}
	if got, err := owner.Recipients(ctx); err != nil || !slices.Equal(got, both) {
		t.Fatalf("recipients after add: %v, %v", got, err)
	}
	mate := open(t, mateID)
	if got, err := mate.Get(ctx, "app/db"); err != nil || string(got.Value.Reveal()) != "before-app/db" {
		t.Fatalf("teammate reads %v, %v", got.Value, err)
	}
	if err := owner.SetRecipients(ctx, both, ParseRecipients(t, own)); err != nil {
		t.Fatal(err)
	}
	if n, err := owner.Rekey(ctx); err != nil || n != 2 {
		t.Fatalf("Rekey: %d records, %v", n, err)
	}
	if _, err := mate.Get(ctx, "app/db"); err == nil || !strings.Contains(err.Error(), "cannot unwrap") {
		t.Fatalf("removed teammate after rekey: %v", err)
	}
	for _, name := range []string{"app/db", "app/api"} {
		got, err := owner.Get(ctx, name)
		if err != nil || string(got.Value.Reveal()) != "before-"+name || got.Version != 1 {
			t.Fatalf("owner after rekey reads %s: %v version %d, %v", name, got.Value, got.Version, err)
		}
	}
	rep, err := owner.Check(ctx)
	if err != nil || rep.Records != 2 || len(rep.Problems) != 0 {
		t.Fatalf("check after rekey: %+v, %v", rep, err)
	}
}

// ParseRecipients parses age public keys, failing t on any other.
func ParseRecipients(t *testing.T, rs []string) []age.Recipient {
	t.Helper()
	var out []age.Recipient
	for _, s := range rs {
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
