package bulk

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// fixture is a Service on fresh file vaults, one for each env, auditing to
// events.
type fixture struct {
	svc    *ops.Service
	events *bytes.Buffer
	store  *spyStore     // the vault opened last
	later  time.Duration // how far past its start the service's clock is
}

// spyStore can make a batch fail after approval, or List forget what is
// there.
type spyStore struct {
	vault.Store
	failCommit bool
	hideList   bool
}

func (s *spyStore) Recipients(ctx context.Context) ([]string, error) {
	return s.Store.(vault.Keyed).Recipients(ctx)
}

func (s *spyStore) SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error {
	return s.Store.(vault.Keyed).SetRecipients(ctx, from, rs)
}

func (s *spyStore) Rekey(ctx context.Context) (int, error) { return s.Store.(vault.Keyed).Rekey(ctx) }

func (s *spyStore) List(ctx context.Context) ([]vault.Meta, error) {
	if s.hideList {
		return []vault.Meta{}, nil
	}
	return s.Store.List(ctx)
}

func (s *spyStore) ApplyBatch(ctx context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	if s.failCommit {
		ms := make([]vault.Meta, b.Len())
		for i := range ms {
			ms[i] = vault.Meta{Name: b.At(i).Name, Version: 7, Created: true}
		}
		if err := approve(ms); err != nil {
			return 0, err
		}
		return 0, errors.New("disk full")
	}
	return s.Store.ApplyBatch(ctx, b, approve)
}

// spyBackends opens file vaults only and keeps the store it opened in the
// fixture.
type spyBackends struct{ f *fixture }

func (b spyBackends) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	st, err := file.Open(vc.Path, vc.Identity, now)
	if err != nil {
		return nil, err
	}
	b.f.store = &spyStore{Store: st}
	return b.f.store, nil
}

func (spyBackends) Create(_ context.Context, _ string, vc ops.VaultConfig, rs []age.Recipient) (bool, error) {
	return file.Create(vc.Path, rs)
}

func (spyBackends) Problems(vc ops.VaultConfig) []string {
	return file.PermissionProblems(vc.Path, vc.Identity)
}

func newFixture(t testing.TB, toml string) *fixture {
	t.Helper()
	f := &fixture{events: &bytes.Buffer{}}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC).Add(f.later) }
	f.svc = opstest.New(t, opstest.Options{Config: toml, Audit: f.events, Now: clock, Backends: spyBackends{f}}).Service
	return f
}

func (f *fixture) lines(t *testing.T) []audit.Event { return opstest.Events(t, f.events.Bytes()) }

const canary = "CANARY-value-5e1d9b"

func secret(s string) vault.Secret { return vault.NewSecret([]byte(s)) }

// wantError fails unless err is an *ops.Error with code whose message
// contains every one of parts.
func wantError(t *testing.T, err error, code manifest.Code, parts ...string) {
	t.Helper()
	var e *ops.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Fatalf("err %q does not contain %q", e.Msg, p)
		}
	}
}
