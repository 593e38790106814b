package seal

import (
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// HistorySize is the exact length of a sealed history part, for chains
// whose numbers and times take every length of varint.
func TestHistorySizeExact(t *testing.T) {
	k, err := Fresh()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	chains := []vault.Chain{
		{Name: "a/b", Highest: 1},
		{Name: "ns/name", Highest: 300, ChangedAt: at, DeletedAt: at.Add(time.Hour)},
		{Name: "ns/old", Highest: 1 << 40, ChangedAt: time.Unix(0, -5)},
	}
	prev := []vault.Record{
		{Meta: vault.Meta{Name: "ns/x", Version: 200, CreatedAt: at, UpdatedAt: at}, Value: vault.NewSecret(make([]byte, 200))},
		{Meta: vault.Meta{Name: "ns/x", Version: 2, CreatedAt: time.Unix(1, 0), UpdatedAt: at, RotatedAt: at}, Value: vault.NewSecret([]byte("v"))},
		{Meta: vault.Meta{Name: "ns/x", Version: 1, CreatedAt: at, UpdatedAt: at}},
	}
	chains = append(chains, vault.Chain{Name: "ns/x", Highest: 201, Previous: prev, ChangedAt: at,
		Current: vault.Record{Meta: vault.Meta{Name: "ns/x", Version: 201, CreatedAt: at, UpdatedAt: at}}, HasCurrent: true})
	for _, c := range chains {
		b, err := k.SealHistory("slot", c)
		if err != nil {
			t.Fatal(err)
		}
		if got := HistorySize(c); got != len(b) {
			t.Errorf("HistorySize of %s = %d, sealed %d", c.Name, got, len(b))
		}
	}
}
