package access

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// sink keeps the events written to it, and fails every write once fail
// is set.
type sink struct {
	buf  bytes.Buffer
	fail bool
}

func (s *sink) Write(p []byte) (int, error) {
	if s.fail {
		return 0, errors.New("stderr is gone")
	}
	return s.buf.Write(p)
}

func (s *sink) events(t *testing.T) []audit.Event {
	t.Helper()
	var out []audit.Event
	for _, l := range strings.Split(strings.TrimSpace(s.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var e audit.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// failingKeyed is a file vault whose SetRecipients and Rekey fail once
// asked to, after the step was audited.
type failingKeyed struct {
	vault.Store
	fail *bool
}

func (k failingKeyed) Recipients(ctx context.Context) ([]string, error) {
	return k.Store.(vault.Keyed).Recipients(ctx)
}

func (k failingKeyed) SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error {
	if *k.fail {
		return errors.New("disk full")
	}
	return k.Store.(vault.Keyed).SetRecipients(ctx, from, rs)
}

func (k failingKeyed) Rekey(ctx context.Context) (int, error) {
	if *k.fail {
		return 0, errors.New("disk full")
	}
	return k.Store.(vault.Keyed).Rekey(ctx)
}

type fileBackends struct{ fail *bool }

func (b fileBackends) Open(_ string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	st, err := file.Open(vc.Path, vc.Identity, now)
	if err != nil {
		return nil, err
	}
	return failingKeyed{Store: st, fail: b.fail}, nil
}

func (fileBackends) Create(_ context.Context, _ string, vc ops.VaultConfig, rs []age.Recipient) (bool, error) {
	return file.Create(vc.Path, rs)
}

func (fileBackends) Problems(ops.VaultConfig) []string { return nil }

// newService is a Service on a file vault made by Init, auditing to the
// sink; setting *fail makes the vault's key changes fail.
func newService(t *testing.T) (*ops.Service, *sink, *bool) {
	t.Helper()
	home := t.TempDir()
	cfg, err := ops.ParseConfig(nil, "arca.toml", func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	out, fail := &sink{}, new(bool)
	s := ops.New(ops.Options{Config: cfg, Audit: audit.NewWriter(out, audit.SourceCLI, nil), Backends: fileBackends{fail}})
	t.Cleanup(func() { s.Close() })
	res, err := Init(s, "")
	if err != nil || !res.IdentityCreated || !res.VaultCreated {
		t.Fatalf("Init: %+v, %v", res, err)
	}
	return s, out, fail
}

func newRecipient(t *testing.T) string {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.Recipient().String()
}

// Init keeps what is there: a second run makes nothing.
func TestInitKeeps(t *testing.T) {
	s, _, _ := newService(t)
	res, err := Init(s, "")
	if err != nil || res.IdentityCreated || res.VaultCreated || res.Recipient == "" {
		t.Fatalf("second Init: %+v, %v", res, err)
	}
	if _, err := os.Stat(res.VaultPath); err != nil {
		t.Fatal(err)
	}
}

// A recipients change whose event cannot be written changes nothing.
func TestRecipientsNotChangedWhenAuditFails(t *testing.T) {
	s, out, _ := newService(t)
	ctx := context.Background()
	before, err := Recipients(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	out.fail = true
	_, err = ChangeRecipients(ctx, s, "", []string{newRecipient(t)}, nil)
	if !errors.Is(err, ops.ErrAudit) || ops.CodeOf(err) != manifest.OpError {
		t.Fatalf("ChangeRecipients: %v; want op_error wrapping ErrAudit", err)
	}
	out.fail = false
	after, err := Recipients(ctx, s, "")
	if err != nil || !slices.Equal(after.Recipients, before.Recipients) {
		t.Fatalf("recipients %v (%v), want them unchanged: %v", after.Recipients, err, before.Recipients)
	}
	if ev := out.events(t); len(ev) != 0 {
		t.Fatalf("events %+v, want none", ev)
	}
}

// A recipients change and a rekey are audited before they are committed;
// one whose commit fails gets a second event, outcome error.
func TestKeyChangesAuditedThenFailed(t *testing.T) {
	s, out, fail := newService(t)
	ctx := context.Background()
	add := newRecipient(t)
	res, err := ChangeRecipients(ctx, s, "", []string{add}, nil)
	if err != nil || !slices.Contains(res.Recipients, add) {
		t.Fatalf("ChangeRecipients: %+v, %v", res, err)
	}
	*fail = true
	if _, err := ChangeRecipients(ctx, s, "", nil, []string{add}); err == nil || !strings.Contains(err.Error(), "audited but not changed") {
		t.Fatalf("failed ChangeRecipients: %v", err)
	}
	if _, err := Rekey(ctx, s, ""); err == nil || !strings.Contains(err.Error(), "audited but did not land") {
		t.Fatalf("failed Rekey: %v", err)
	}
	var got []string
	for _, e := range out.events(t) {
		got = append(got, e.Event+" "+e.Op+" "+e.Outcome+" "+e.Env)
	}
	want := []string{
		"recipients recipients ok default",
		"recipients recipients ok default", "error recipients error default",
		"rekey rekey ok default", "error rekey error default",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An identity rotation leaves the vault opened by the new identity only,
// in the old identity's file.
func TestRotateIdentity(t *testing.T) {
	s, _, _ := newService(t)
	ctx := context.Background()
	rot, err := RotateIdentity(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if rot.OldKey == rot.NewKey || len(rot.Vaults) != 1 {
		t.Fatalf("rotation %+v", rot)
	}
	if _, err := os.Stat(rot.Path + ".next"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the new identity was left beside the old: %v", err)
	}
	fresh := s.WithConfig(s.Config())
	defer fresh.Close()
	res, err := Recipients(ctx, fresh, "")
	if err != nil || !slices.Equal(res.Recipients, []string{rot.NewKey}) {
		t.Fatalf("recipients after rotation %v (%v), want only %s", res.Recipients, err, rot.NewKey)
	}
	id, err := fresh.Identity("")
	if err != nil || id.PublicKey != rot.NewKey {
		t.Fatalf("identity file holds %s (%v), want %s", id.PublicKey, err, rot.NewKey)
	}
}
