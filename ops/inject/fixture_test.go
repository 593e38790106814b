package inject

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

const canary = "CANARY-value-5e1d9b"

// An *ops.Service is what arca run and arca env materialize from.
var _ Source = (*ops.Service)(nil)

// fixture is an ops.Service on a fresh embedded file vault, auditing to
// events.
type fixture struct {
	svc    *ops.Service
	events *bytes.Buffer
	store  *spyStore
}

// spyStore counts the calls that reach the vault.
type spyStore struct {
	vault.Store
	calls int
}

func (s *spyStore) Get(ctx context.Context, name string) (vault.Record, error) {
	s.calls++
	return s.Store.Get(ctx, name)
}

func (s *spyStore) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	s.calls++
	return s.Store.Apply(ctx, w, approve)
}

// spyBackends opens the real vault and keeps a spy on it in the fixture.
type spyBackends struct {
	backend.Kinds
	f *fixture
}

func (b spyBackends) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	st, err := b.Kinds.Open(name, vc, now)
	if err != nil {
		return nil, err
	}
	b.f.store = &spyStore{Store: st}
	return b.f.store, nil
}

// newFixture returns a service on the config toml, each of its envs'
// vaults initialised.
func newFixture(t *testing.T, toml string) *fixture {
	t.Helper()
	f := &fixture{events: &bytes.Buffer{}}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }
	f.svc = opstest.New(t, opstest.Options{Config: toml, Audit: f.events, Now: clock, Backends: spyBackends{f: f}}).Service
	return f
}

// lines returns the audit events written so far.
func (f *fixture) lines(t *testing.T) []audit.Event { return opstest.Events(t, f.events.Bytes()) }

func secret(s string) vault.Secret { return vault.NewSecret([]byte(s)) }
