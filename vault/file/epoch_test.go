package file_test

import (
	"context"
	"testing"

	"github.com/arca-secrets/arca/vault"
)

// TestEpochSkipsRechecksOnlyWithinAnEpoch: within one read epoch a handle
// checks for other writers once; a new epoch, or none, checks again.
func TestEpochSkipsRechecksOnlyWithinAnEpoch(t *testing.T) {
	v := newFileVault(t)
	a, b := v.open(t), v.open(t)
	put := func(v string) {
		t.Helper()
		if _, err := b.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "ns/x", Value: vault.NewSecret([]byte(v))}, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	get := func(ctx context.Context) string {
		t.Helper()
		r, err := a.Get(ctx, "ns/x")
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Value.Reveal())
	}
	put("1")
	e1 := vault.WithEpoch(context.Background(), 1)
	if got := get(e1); got != "1" {
		t.Fatalf("first get in epoch 1 = %q", got)
	}
	put("2")
	if got := get(e1); got != "1" {
		t.Fatalf("second get in epoch 1 = %q; a write concurrent with the epoch may be seen or not, but the check must be skipped", got)
	}
	if got := get(vault.WithEpoch(context.Background(), 2)); got != "2" {
		t.Fatalf("get in epoch 2 = %q, want the write made before it", got)
	}
	put("3")
	if got := get(context.Background()); got != "3" {
		t.Fatalf("get with no epoch = %q, want 3", got)
	}
}
