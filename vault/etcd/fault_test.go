package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// lossyKV commits the transactions match picks for real, then reports them
// as timed out, as if their answer were lost; hook runs in between, once.
// always makes every matching transaction lose its answer, not only the
// first; answer makes none lose it (hook still runs after the first).
type lossyKV struct {
	clientv3.KV
	match  func(then []clientv3.Op) bool
	hook   func()
	always bool
	answer bool
	fired  bool
}

func (k *lossyKV) Txn(ctx context.Context) clientv3.Txn { return &lossyTxn{Txn: k.KV.Txn(ctx), k: k} }

type lossyTxn struct {
	clientv3.Txn
	k    *lossyKV
	then []clientv3.Op
}

func (t *lossyTxn) If(c ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(c...); return t }
func (t *lossyTxn) Then(o ...clientv3.Op) clientv3.Txn {
	t.then = o
	t.Txn = t.Txn.Then(o...)
	return t
}
func (t *lossyTxn) Else(o ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(o...); return t }
func (t *lossyTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.Txn.Commit()
	if err != nil || !t.k.match(t.then) || (t.k.fired && !t.k.always) {
		return resp, err
	}
	t.k.fired = true
	if h := t.k.hook; h != nil {
		t.k.hook = nil
		h()
	}
	if t.k.answer {
		return resp, nil
	}
	return nil, context.DeadlineExceeded
}

// puts reports whether then puts a key ending in suffix.
func puts(suffix string) func([]clientv3.Op) bool {
	return func(then []clientv3.Op) bool {
		for _, o := range then {
			if o.IsPut() && strings.HasSuffix(string(o.KeyBytes()), suffix) {
				return true
			}
		}
		return false
	}
}

type faultVault struct {
	c      *etcdtest.Cluster
	prefix string
	id     string
}

func newFaultVault(t *testing.T, prefix string) faultVault {
	c := etcdtest.Start(t, 1)
	id := filepath.Join(t.TempDir(), "id.txt")
	if _, _, err := identity.Ensure(id, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, _ := identity.Load(id, nil)
	if _, err := Create(context.Background(), Options{Endpoints: c.Endpoints(), Prefix: prefix, Identity: id, Timeout: 3 * time.Second}, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	return faultVault{c, prefix, id}
}

func (v faultVault) open(t *testing.T) *Vault {
	return v.openTimeout(t, 3*time.Second)
}

// openTimeout is open with an op timeout of its own.
func (v faultVault) openTimeout(t *testing.T, timeout time.Duration) *Vault {
	e, err := Open(Options{Endpoints: v.c.Endpoints(), Prefix: v.prefix, Identity: v.id, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func putValue(e *Vault, name, value string, approve vault.Approve) (vault.Meta, error) {
	if approve == nil {
		approve = func(vault.Meta) error { return nil }
	}
	return e.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}, approve)
}

func wantRecord(t *testing.T, e *Vault, name, value string, version uint64) {
	t.Helper()
	got, err := e.Get(context.Background(), name)
	if err != nil || string(got.Value.Reveal()) != value || got.Version != version {
		t.Fatalf("%s = %q version %d, %v; want %q version %d", name, got.Value.Reveal(), got.Version, err, value, version)
	}
}

// A commit that landed but whose answer was lost is a success, even when
// another writer has built on it before the retry (once the lock lapsed).
func TestEtcdLostCommitAnswer(t *testing.T) {
	v := newFaultVault(t, "/arca/lost/")
	e1, e2 := v.open(t), v.open(t)
	if _, err := putValue(e1, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	var m2 vault.Meta
	var err2 error
	raw := v.c.Client(t)
	e1.cli.KV = &lossyKV{KV: e1.cli.KV, match: puts("written"), hook: func() {
		// e1 holds the record's lock: let it lapse, so e2 can go ahead.
		if _, err := raw.Delete(context.Background(), v.prefix+"lock/", clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
		m2, err2 = putValue(e2, "app/db", "three", nil)
	}}
	m1, err := putValue(e1, "app/db", "two", nil)
	if err != nil || m1.Version != 2 {
		t.Fatalf("e1's put landed as version 2 but was reported %d, %v", m1.Version, err)
	}
	if err2 != nil || m2.Version != 3 {
		t.Fatalf("e2's put: version %d, %v", m2.Version, err2)
	}
	wantRecord(t, e1, "app/db", "three", 3)
}

// A write whose lock lapsed while it was being approved (its lock key is
// gone and another writer went ahead) fails rather than overwrite.
func TestEtcdLapsedLockLosesNothing(t *testing.T) {
	v := newFaultVault(t, "/arca/lapse/")
	e1, e2 := v.open(t), v.open(t)
	raw := v.c.Client(t)
	if _, err := putValue(e1, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	_, err := putValue(e1, "app/db", "two", func(vault.Meta) error {
		if _, err := raw.Delete(context.Background(), v.prefix+"lock/", clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
		if m, err := putValue(e2, "app/db", "three", nil); err != nil || m.Version != 2 {
			t.Fatalf("e2 while e1's lock lapsed: %+v, %v", m, err)
		}
		return nil
	})
	if !errors.Is(err, errConflict) {
		t.Fatalf("e1 after its lock lapsed: %v, want the conflict", err)
	}
	wantRecord(t, e1, "app/db", "three", 2)
}

// A handle whose lock attempts never get an answer lets its lease go, so
// the lock key it may have left does not hold the record from others.
func TestEtcdUnansweredLockFreesTheRecord(t *testing.T) {
	v := newFaultVault(t, "/arca/stuck/")
	e1, e2 := v.open(t), v.open(t)
	if _, err := putValue(e1, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	waitLockKeys(t, v, 0) // e1 lets go of the lock after holdIdle
	e1.cli.KV = &lossyKV{KV: e1.cli.KV, match: puts(""), always: true}
	if _, err := putValue(e1, "app/db", "two", nil); err == nil {
		t.Fatal("a put whose every answer was lost succeeded")
	}
	if m, err := putValue(e2, "app/db", "three", nil); err != nil || m.Version != 2 {
		t.Fatalf("another handle after the stuck one: %+v, %v", m, err)
	}
}

// A write between a rekey's snapshot and its switch makes that pass fail
// and the rekey try again: the write survives, and so does every record.
func TestEtcdRekeyRacingAWrite(t *testing.T) {
	v := newFaultVault(t, "/arca/rekeyrace/")
	e1, e2 := v.open(t), v.open(t)
	for _, n := range []string{"app/a", "app/b"} {
		if _, err := putValue(e1, n, "v-"+n, nil); err != nil {
			t.Fatal(err)
		}
	}
	newRecords := func(then []clientv3.Op) bool {
		return len(then) > 0 && then[0].IsPut() && strings.Contains(string(then[0].KeyBytes()), "/r/")
	}
	e1.cli.KV = &lossyKV{KV: e1.cli.KV, match: newRecords, answer: true, hook: func() {
		if _, err := putValue(e2, "app/a", "during", nil); err != nil {
			t.Fatal(err)
		}
	}}
	// The first pass fails (a write landed after its snapshot); the next
	// pass re-seals the record as written.
	if n, err := e1.Rekey(context.Background()); err != nil || n != 2 {
		t.Fatalf("rekey with a write in the middle of its first pass: %d, %v", n, err)
	}
	wantRecord(t, e2, "app/a", "during", 2)
	wantRecord(t, e2, "app/b", "v-app/b", 1)
	if metas, err := e2.List(context.Background()); err != nil || len(metas) != 2 {
		t.Fatalf("list after the failed rekey: %d, %v", len(metas), err)
	}
}

// A rekey whose switch landed but whose answer was lost, after which a
// teammate changed the recipients, is a success: no record is dropped.
func TestEtcdRekeyLostAnswer(t *testing.T) {
	v := newFaultVault(t, "/arca/rekeylost/")
	e1, e2 := v.open(t), v.open(t)
	for _, n := range []string{"app/a", "app/b", "app/c"} {
		if _, err := putValue(e1, n, "v", nil); err != nil {
			t.Fatal(err)
		}
	}
	e1.cli.KV = &lossyKV{KV: e1.cli.KV, match: puts("/vault"), hook: func() {
		ctx := context.Background()
		rs, _ := e2.Recipients(ctx)
		prs, _ := seal.ParseRecipients(rs)
		if err := e2.SetRecipients(ctx, rs, prs); err != nil {
			t.Fatal(err)
		}
	}}
	if n, err := e1.Rekey(context.Background()); err != nil || n != 3 {
		t.Fatalf("rekey whose answer was lost: %d, %v", n, err)
	}
	if metas, err := e2.List(context.Background()); err != nil || len(metas) != 3 {
		t.Fatalf("after the rekey: %d records, %v", len(metas), err)
	}
}

// A handle that loaded the header before another handle's rekey writes
// under the new key afterwards.
func TestEtcdWriteAfterAnotherHandlesRekey(t *testing.T) {
	v := newFaultVault(t, "/arca/afterrekey/")
	e1, e2 := v.open(t), v.open(t)
	if _, err := putValue(e1, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	wantRecord(t, e2, "app/db", "one", 1)
	if _, err := e1.Rekey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m, err := putValue(e2, "app/db", "two", nil); err != nil || m.Version != 2 {
		t.Fatalf("put by the handle that had the old header: %+v, %v", m, err)
	}
	wantRecord(t, e1, "app/db", "two", 2)
}

// A commit that landed but never got an answer, on any try, is found by
// its token once the op's deadline passes: a success, not an error.
func TestEtcdCommitNeverAnswered(t *testing.T) {
	v := newFaultVault(t, "/arca/noanswer/")
	e := v.open(t)
	if _, err := putValue(e, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: puts("written"), always: true}
	if m, err := putValue(e, "app/db", "two", nil); err != nil || m.Version != 2 {
		t.Fatalf("a put that landed without an answer: %+v, %v", m, err)
	}
	wantRecord(t, v.open(t), "app/db", "two", 2)
}

// A header that merely names a rekey's new vault id (anyone watching the
// cluster sees it as the new records land) does not make a failed rekey a
// success: it must authenticate under the new key.
func TestEtcdRekeyNotFooledByASpoofedHeader(t *testing.T) {
	v := newFaultVault(t, "/arca/spoof/")
	e := v.open(t)
	if _, err := putValue(e, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	raw := v.c.Client(t)
	newRecords := func(then []clientv3.Op) bool {
		return len(then) > 0 && then[0].IsPut() && strings.Contains(string(then[0].KeyBytes()), "/r/")
	}
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: newRecords, answer: true, hook: func() {
		ctx := context.Background()
		resp, err := raw.Get(ctx, v.prefix+"r/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var newID string
		for _, kv := range resp.Kvs {
			id := strings.Split(strings.TrimPrefix(string(kv.Key), v.prefix+"r/"), "/")[0]
			if id != e.hdr.VaultID {
				newID = id
			}
		}
		hdr, err := raw.Get(ctx, v.prefix+"vault")
		if err != nil || newID == "" {
			t.Fatalf("header %v, new vault id %q", err, newID)
		}
		var h header
		if err := json.Unmarshal(hdr.Kvs[0].Value, &h); err != nil {
			t.Fatal(err)
		}
		h.VaultID = newID
		spoof, _ := json.Marshal(h)
		if _, err := raw.Put(ctx, v.prefix+"vault", string(spoof)); err != nil {
			t.Fatal(err)
		}
	}}
	if n, err := e.Rekey(context.Background()); err == nil {
		t.Fatalf("rekey with a spoofed header in the middle reported success (%d records)", n)
	}
}
