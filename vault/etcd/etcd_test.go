package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// etcdVault is an empty shared vault under its own prefix of a cluster.
type etcdVault struct {
	c    *etcdtest.Cluster
	opts etcd.Options
}

// testTimeout is an op's deadline in these tests: the default timeout_ms.
const testTimeout = config.DefaultTimeoutMS * time.Millisecond

// newEtcdVault makes an identity and an empty vault under prefix.
func newEtcdVault(t testing.TB, c *etcdtest.Cluster, prefix string) etcdVault {
	t.Helper()
	idPath := filepath.Join(t.TempDir(), "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := etcd.Options{Endpoints: c.AllEndpoints(), Prefix: prefix, Identity: idPath, Timeout: testTimeout}
	created, err := etcd.Create(context.Background(), o, identity.RecipientsOf(ids))
	if err != nil || !created {
		t.Fatalf("Create: created %t, %v", created, err)
	}
	return etcdVault{c: c, opts: o}
}

func (v etcdVault) open(t testing.TB) *etcd.Vault {
	t.Helper()
	e, err := etcd.Open(v.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// raw returns every key and value under the vault's prefix, as stored.
func (v etcdVault) raw(t testing.TB, cli *clientv3.Client) map[string][]byte {
	t.Helper()
	resp, err := cli.Get(context.Background(), v.opts.Prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

func TestEtcdConformance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli := c.Client(t)
	n := 0
	vaulttest.Run(t, func(t *testing.T, now func() time.Time) vaulttest.Harness {
		n++
		v := newEtcdVault(t, c, fmt.Sprintf("/arca/conformance-%d/", n))
		v.opts.Now = now
		return vaulttest.Harness{
			Open:    func() (vault.Store, error) { return etcd.Open(v.opts) },
			Corrupt: func() error { return corruptEtcdRecord(cli, v.opts.Prefix) },
		}
	})
}

// corruptEtcdRecord flips a ciphertext byte of the current record of the
// one name under prefix (what a get opens: see etcd.CurrentPart).
func corruptEtcdRecord(cli *clientv3.Client, prefix string) error {
	ctx := context.Background()
	resp, err := cli.Get(ctx, prefix+"r/", clientv3.WithPrefix())
	if err != nil {
		return err
	}
	if len(resp.Kvs) != 1 {
		return fmt.Errorf("%d records under %s, want 1", len(resp.Kvs), prefix)
	}
	kv := resp.Kvs[0]
	off, n := etcd.CurrentPart(kv.Value)
	if n == 0 {
		return fmt.Errorf("the name under %s has no current record", prefix)
	}
	kv.Value[off+n/2] ^= 0x01
	_, err = cli.Put(ctx, string(kv.Key), string(kv.Value))
	return err
}

// TestEtcdHoldsNoNameNorValue reads every raw key and value the vault put
// in etcd: no record name, namespace or value appears in any of them.
func TestEtcdHoldsNoNameNorValue(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/canary/")
	e := v.open(t)
	const name, value = "canaryns/CANARY-NAME-71c3", "CANARY-VALUE-e5d0f9"
	for _, w := range []vault.Write{{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))},
		{Kind: vault.Rotate, Name: name, Value: vault.NewSecret([]byte(value + "-2"))},
		{Kind: vault.Put, Name: "other/x", Value: vault.NewSecret([]byte(value + "-3"))}} {
		if _, err := e.Apply(context.Background(), w, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Rekey(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw := v.raw(t, c.Client(t))
	if len(raw) < 4 {
		t.Fatalf("expected header, marker and 2 records, got %d keys", len(raw))
	}
	for k, val := range raw {
		for _, secret := range []string{"CANARY-NAME", "canaryns", "CANARY-VALUE", "other/x"} {
			if strings.Contains(k, secret) || strings.Contains(string(val), secret) {
				t.Errorf("etcd key %q (or its value) holds %q in clear", k, secret)
			}
		}
	}
	if got, err := e.Get(context.Background(), name); err != nil || string(got.Value.Reveal()) != value+"-2" || got.Version != 2 {
		t.Fatalf("after rekey: %v version %d, %v", got.Value, got.Version, err)
	}
}

// TestEtcdRacingWritersLoseNothing: writers on separate handles (separate
// clients, as on separate machines) put the same record at once. Every put
// succeeds with a distinct version, the versions run 1..n with no gap, and
// the record ends at the highest one.
func TestEtcdRacingWritersLoseNothing(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/race/")
	const writers, each = 4, 15
	type result struct{ versions []uint64 }
	results := make(chan result, writers)
	for w := range writers {
		e := v.open(t)
		go func() {
			var r result
			for i := range each {
				m, err := e.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret(fmt.Appendf(nil, "w%d-%d", w, i))},
					func(vault.Meta) error { return nil })
				if err != nil {
					t.Errorf("writer %d: %v", w, err) // writers take turns: none fails
					continue
				}
				r.versions = append(r.versions, m.Version)
			}
			results <- r
		}()
	}
	seen := map[uint64]bool{}
	var top uint64
	for range writers {
		r := <-results
		for _, ver := range r.versions {
			if seen[ver] {
				t.Errorf("version %d acknowledged twice: an update was lost", ver)
			}
			seen[ver], top = true, max(top, ver)
		}
	}
	if top != uint64(len(seen)) || top != writers*each {
		t.Errorf("%d writes acknowledged but the top version is %d", len(seen), top)
	}
	got, err := v.open(t).Get(context.Background(), "app/db")
	if err != nil || got.Version != top {
		t.Fatalf("final record: version %d, %v; want %d", got.Version, err, top)
	}
}

// TestEtcdNoClusterIsBoundedError: with no member answering, an op ends
// with an error naming the vault once its deadline passes.
func TestEtcdNoClusterIsBoundedError(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/down/")
	v.opts.Timeout = 1500 * time.Millisecond
	e := v.open(t)
	c.Members[0].Kill(t)
	start := time.Now()
	_, err := e.Get(context.Background(), "app/db")
	if err == nil || errors.Is(err, vault.ErrNotFound) || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("Get with the cluster down: %v", err)
	}
	// Not a timing assertion on speed: the op must not run unbounded.
	if waited := time.Since(start); waited > v.opts.Timeout+5*time.Second {
		t.Errorf("Get waited %v past its %v deadline", waited, v.opts.Timeout)
	}
}

// TestEtcdRecipients runs the team scenario on the shared vault.
func TestEtcdRecipients(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/team/")
	vaulttest.Team(t, v.opts.Identity, func(t *testing.T, identity string) vaulttest.KeyedStore {
		o := v.opts
		o.Identity = identity
		return etcdVault{c: c, opts: o}.open(t)
	})
}

// TestEtcdFirstWriteCreates: a prefix nobody initialized reads as an empty
// vault, and the first put creates it, wrapped to the identity and the
// configured recipients.
func TestEtcdFirstWriteCreates(t *testing.T) {
	c := etcdtest.Start(t, 1)
	idPath := filepath.Join(t.TempDir(), "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	const mate = "age142788gg49p6s6lcmeq93s3rgep97r43g6vw6cd3jx0tjujns5adsue040q"
	v := etcdVault{c: c, opts: etcd.Options{Endpoints: c.Endpoints(), Prefix: "/arca/fresh/", Identity: idPath, Recipients: []string{mate}, Timeout: testTimeout}}
	e := v.open(t)
	ctx := context.Background()
	ok := func(vault.Meta) error { return nil }
	if _, err := e.Get(ctx, "app/db"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("Get before any write: %v", err)
	}
	if metas, err := e.List(ctx); err != nil || len(metas) != 0 {
		t.Fatalf("List before any write: %v, %v", metas, err)
	}
	for _, k := range []vault.Kind{vault.Rotate, vault.Remove} {
		if _, err := e.Apply(ctx, vault.Write{Kind: k, Name: "app/db", Value: vault.NewSecret([]byte("x"))}, ok); !errors.Is(err, vault.ErrNotFound) {
			t.Fatalf("kind %d before any write: %v", k, err)
		}
	}
	if len(v.raw(t, c.Client(t))) != 0 {
		t.Fatal("a read or a refused write created something")
	}
	m, err := e.Apply(ctx, vault.Write{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret([]byte("first"))}, ok)
	if err != nil || m.Version != 1 || !m.Created {
		t.Fatalf("first put: %+v, %v", m, err)
	}
	rs, err := e.Recipients(ctx)
	if err != nil || len(rs) != 2 || rs[1] != mate {
		t.Fatalf("recipients of the created vault: %v, %v", rs, err)
	}
}

// Open refuses settings it cannot use, naming the problem, before any
// round trip.
func TestOpenEtcdRefusals(t *testing.T) {
	dir := t.TempDir()
	idPath := filepath.Join(dir, "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	bigPassword := filepath.Join(dir, "pw-big")
	if err := os.WriteFile(bigPassword, []byte(strings.Repeat("p", 4097)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := etcd.Options{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/arca/x/", Identity: idPath, Timeout: testTimeout}
	for _, c := range []struct {
		name string
		edit func(*etcd.Options)
		want string
	}{
		{"no endpoints", func(o *etcd.Options) { o.Endpoints = nil }, "no endpoints"},
		{"no timeout", func(o *etcd.Options) { o.Timeout = 0 }, "no timeout"},
		{"prefix without slash", func(o *etcd.Options) { o.Prefix = "arca" }, `prefix "arca" must start and end with /`},
		{"CA file not PEM", func(o *etcd.Options) { o.CAFile = notPEM }, "holds no PEM certificate"},
		{"CA file missing", func(o *etcd.Options) { o.CAFile = filepath.Join(dir, "nope.pem") }, "CA file"},
		{"cert without key", func(o *etcd.Options) { o.CertFile = notPEM }, "needs both a cert and a key file"},
		{"bad client cert", func(o *etcd.Options) { o.CertFile, o.KeyFile = notPEM, notPEM }, "TLS client certificate"},
		{"password file over 4096 bytes", func(o *etcd.Options) { o.Username, o.PasswordFile = "u", bigPassword }, "larger than 4096 bytes"},
		{"password file endless", func(o *etcd.Options) { o.Username, o.PasswordFile = "u", "/dev/zero" }, "larger than 4096 bytes"},
		{"password file missing", func(o *etcd.Options) { o.Username, o.PasswordFile = "u", filepath.Join(dir, "nope") }, "etcd password file"},
		{"CA file endless", func(o *etcd.Options) { o.CAFile = "/dev/zero" }, "larger than 1048576 bytes"},
		{"no identity", func(o *etcd.Options) { o.Identity = filepath.Join(dir, "none.txt") }, "none.txt"},
		{"plain http with TLS files", func(o *etcd.Options) { o.Endpoints, o.CAFile = []string{"http://127.0.0.1:1"}, notPEM },
			`endpoint "http://127.0.0.1:1" names a scheme without TLS, but TLS files are set`},
	} {
		o := base
		c.edit(&o)
		if e, err := etcd.Open(o); err == nil || !strings.Contains(err.Error(), c.want) {
			if e != nil {
				e.Close()
			}
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
