package opstest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// New creates the vault of every env of the config inside the temp HOME,
// and its service audits to Audit at Now; another service on the fixture
// reads what the first wrote.
func TestNew(t *testing.T) {
	var events bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := New(t, Options{
		Config: "default_env = \"a\"\n[envs.a]\nvault = \"va\"\n[envs.b]\nvault = \"vb\"\n" +
			"[vaults.va]\nkind = \"file\"\n[vaults.vb]\nkind = \"file\"\n",
		Audit: &events,
		Now:   func() time.Time { return now },
	})
	envs := f.Config.EnvNames()
	if len(envs) < 2 {
		t.Fatalf("envs %v, want a and b", envs)
	}
	for _, env := range envs {
		_, vc, err := f.Config.VaultFor(env)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(vc.Path, f.Home+string(filepath.Separator)) {
			t.Errorf("env %s: vault %s is not in HOME %s", env, vc.Path, f.Home)
		}
		if _, err := os.Stat(vc.Path); err != nil {
			t.Errorf("env %s: vault not created: %v", env, err)
		}
	}
	ctx := context.Background()
	if _, err := f.Service.Put(ctx, ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte("v1"))}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(events.String(), `"ts":"2026-01-02T03:04:05`) {
		t.Errorf("the audit events are not stamped by Now: %s", events.String())
	}
	got, err := f.NewService(t, Options{}).Get(ctx, ops.Request{Ref: "arca://app/db"})
	if err != nil || string(got.Value.Reveal()) != "v1" {
		t.Fatalf("another service reads %q, %v", got.Value.Reveal(), err)
	}
}
