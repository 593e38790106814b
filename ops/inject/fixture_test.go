package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/backend"
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
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	cfg, err := ops.ParseConfig([]byte(toml), "arca.toml", getenv)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{events: &bytes.Buffer{}}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }
	f.svc = ops.New(ops.Options{Config: cfg, Audit: audit.NewWriter(f.events, audit.SourceCLI, clock), Now: clock,
		Backends: spyBackends{f: f}})
	t.Cleanup(func() { f.svc.Close() })
	for _, env := range cfg.EnvNames() {
		if _, err := access.Init(f.svc, env); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// lines returns the audit events written so far.
func (f *fixture) lines(t *testing.T) []audit.Event {
	t.Helper()
	var out []audit.Event
	for _, l := range strings.Split(strings.TrimSpace(f.events.String()), "\n") {
		if l == "" {
			continue
		}
		var e audit.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func secret(s string) vault.Secret { return vault.NewSecret([]byte(s)) }
