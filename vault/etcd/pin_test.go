package etcd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// TestEtcdPinCatchesASubstitutedHeader: whoever can write the cluster
// replaces the header with one of their own making, wrapped to the team's
// own public key. A machine that used the vault before refuses it, both a
// handle already open and a new one; a teammate's real rekeys, even two
// while this machine was away, are followed.
func TestEtcdPinCatchesASubstitutedHeader(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/pin/")
	ctx := context.Background()
	pinA := filepath.Join(t.TempDir(), "state", "a.pin")
	openWith := func(pin string) *etcd.Vault {
		o := v.opts
		o.PinFile = pin
		return etcdVault{c: c, opts: o}.open(t)
	}
	a := openWith(pinA)
	if _, err := putValue(a, "app/db", "one"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(pinA); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pin file after first use: %v, %v", fi, err)
	}

	// A teammate rekeys twice while this machine is away; it follows.
	b := openWith(filepath.Join(t.TempDir(), "b.pin"))
	for range 2 {
		if _, err := b.Rekey(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := openWith(pinA).Get(ctx, "app/db"); err != nil || string(got.Value.Reveal()) != "one" {
		t.Fatalf("after two rekeys by a teammate: %v, %v", got.Value, err)
	}

	// The substitution: a fresh header for the same recipients.
	rs, err := a.Recipients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := c.Client(t)
	if _, err := raw.Delete(ctx, v.opts.Prefix+"vault"); err != nil {
		t.Fatal(err)
	}
	if created, err := etcd.Create(ctx, v.opts, vaulttest.ParseRecipients(t, rs)); err != nil || !created {
		t.Fatalf("substitute header: %t, %v", created, err)
	}
	for name, h := range map[string]*etcd.Vault{"the open handle": a, "a new handle": openWith(pinA)} {
		_, err := putValue(h, "app/new", "would leak")
		if err == nil || !strings.Contains(err.Error(), "may have been substituted") || !strings.Contains(err.Error(), pinA) {
			t.Errorf("%s, writing after the substitution: %v", name, err)
		}
	}
	// Without a pin the same header is trusted on first use.
	if _, err := putValue(openWith(filepath.Join(t.TempDir(), "fresh.pin")), "app/x", "y"); err != nil {
		t.Fatalf("a machine that pinned nothing: %v", err)
	}
	if err := os.WriteFile(pinA, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openWith(pinA).Get(ctx, "app/db"); err == nil || !strings.Contains(err.Error(), "is malformed") {
		t.Errorf("a malformed pin file: %v", err)
	}
}

func putValue(e *etcd.Vault, name, value string) (vault.Meta, error) {
	return e.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))},
		func(vault.Meta) error { return nil })
}

// TestEtcdPinRefusesAHeaderFromBeforeARekey: putting back the header (and
// records) from before a rekey — the one a removed teammate can still
// unwrap — is refused by a machine that used the vault since.
func TestEtcdPinRefusesAHeaderFromBeforeARekey(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/rollback/")
	ctx := context.Background()
	o := v.opts
	o.PinFile = filepath.Join(t.TempDir(), "a.pin")
	a := etcdVault{c: c, opts: o}.open(t)
	if _, err := putValue(a, "app/db", "one"); err != nil {
		t.Fatal(err)
	}
	raw := c.Client(t)
	old, err := raw.Get(ctx, v.opts.Prefix+"vault")
	if err != nil || len(old.Kvs) != 1 {
		t.Fatalf("header before the rekey: %v", err)
	}
	if _, err := a.Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Put(ctx, v.opts.Prefix+"vault", string(old.Kvs[0].Value)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "app/db"); err == nil || !strings.Contains(err.Error(), "may have been substituted") {
		t.Fatalf("the header from before the rekey, put back: %v", err)
	}
}

// TestEtcdPinHoldsForAnOpenHandle: a long-lived handle (a serve) still on
// the old key refuses the old header put back after another process on
// this machine rekeyed (and moved the pin); the pin follows a teammate's
// rekey; a history cut short under the current key fails to authenticate.
func TestEtcdPinHoldsForAnOpenHandle(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/longlived/")
	ctx := context.Background()
	pin := filepath.Join(t.TempDir(), "m.pin")
	open := func() *etcd.Vault {
		o := v.opts
		o.PinFile = pin
		return etcdVault{c: c, opts: o}.open(t)
	}
	serve, cli := open(), open()
	if _, err := putValue(serve, "app/db", "one"); err != nil {
		t.Fatal(err)
	}
	pinned := func() string {
		b, err := os.ReadFile(pin)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := pinned()
	raw := c.Client(t)
	old, err := raw.Get(ctx, v.opts.Prefix+"vault")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	if pinned() == before {
		t.Fatal("the rekeying process did not move the pin")
	}
	if _, err := raw.Put(ctx, v.opts.Prefix+"vault", string(old.Kvs[0].Value)); err != nil {
		t.Fatal(err)
	}
	if _, err := putValue(serve, "app/db", "sealed to the old key"); err == nil || !strings.Contains(err.Error(), "may have been substituted") {
		t.Fatalf("the open handle, after the old header was put back: %v", err)
	}

	// A teammate's rekey, with a pin of its own: this machine follows it
	// and moves its pin along.
	w := newEtcdVault(t, c, "/arca/follow/")
	o := w.opts
	o.PinFile = pin + "2"
	mine := etcdVault{c: c, opts: o}.open(t)
	if _, err := putValue(mine, "app/db", "x"); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(o.PinFile)
	o2 := w.opts
	o2.PinFile = filepath.Join(t.TempDir(), "teammate.pin")
	if _, err := (etcdVault{c: c, opts: o2}.open(t)).Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Get(ctx, "app/db"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(o.PinFile); string(again) == string(first) {
		t.Error("following a teammate's rekey did not move the pin")
	}

	// The history cut to its last link, under the same key.
	hdr, err := raw.Get(ctx, w.opts.Prefix+"vault")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hdr.Kvs[0].Value, &h); err != nil {
		t.Fatal(err)
	}
	chain := h["chain"].([]any)
	h["chain"] = chain[len(chain)-1:]
	cut, _ := json.Marshal(h)
	if _, err := raw.Put(ctx, w.opts.Prefix+"vault", string(cut)); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Get(ctx, "app/db"); err == nil || !strings.Contains(err.Error(), "header fails to authenticate") {
		t.Fatalf("a history cut short: %v", err)
	}
}
