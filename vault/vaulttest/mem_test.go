package vaulttest

import (
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// TestStepStore runs the suite against memStore, a store that keeps its
// chains in memory and follows vault.Step and nothing else: what the suite
// expects of history is what Step makes.
func TestStepStore(t *testing.T) {
	Run(t, func(t *testing.T, now func() time.Time) Harness {
		v := NewMemVault()
		return Harness{
			Open:    func() (vault.Store, error) { return v.Open(now), nil },
			Corrupt: v.Corrupt,
		}
	})
}
