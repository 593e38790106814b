package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// countingKV counts the commit transactions (those that put the written
// marker) and the lock transactions (those that put a lock key).
type countingKV struct {
	clientv3.KV
	mu             sync.Mutex
	commits, locks int
}

func (k *countingKV) Txn(ctx context.Context) clientv3.Txn {
	return &countingTxn{Txn: k.KV.Txn(ctx), k: k}
}

type countingTxn struct {
	clientv3.Txn
	k *countingKV
}

func (t *countingTxn) If(c ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(c...); return t }
func (t *countingTxn) Else(o ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(o...)
	return t
}
func (t *countingTxn) Then(o ...clientv3.Op) clientv3.Txn {
	t.k.mu.Lock()
	switch {
	case puts("written")(o):
		t.k.commits++
	case containsLock(o):
		t.k.locks++
	}
	t.k.mu.Unlock()
	t.Txn = t.Txn.Then(o...)
	return t
}

func containsLock(ops []clientv3.Op) bool {
	for _, o := range ops {
		if o.IsPut() && strings.Contains(string(o.KeyBytes()), "/lock/") {
			return true
		}
	}
	return false
}

func allow(vault.Meta) error { return nil }

func put(name, value string) vault.Write {
	return vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}
}

func addAll(t *testing.T, g vault.Group, ws ...vault.Write) {
	t.Helper()
	for _, w := range ws {
		if _, err := g.Add(context.Background(), w, allow); err != nil {
			t.Fatalf("Add %s: %v", w.Name, err)
		}
	}
}

func newGroup(t *testing.T, e *Vault) vault.Group {
	t.Helper()
	g, err := e.Group(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A group of n writes is n lock transactions and one commit: n+1 raft
// writes where n puts are 2n.
func TestEtcdGroupIsOneCommit(t *testing.T) {
	v := newFaultVault(t, "/arca/group/")
	e := v.open(t)
	if _, err := putValue(e, "app/k0", "old", nil); err != nil {
		t.Fatal(err)
	}
	kv := &countingKV{KV: e.cli.KV}
	e.cli.KV = kv
	g := newGroup(t, e)
	addAll(t, g, put("app/k0", "new"), put("app/k1", "1"), put("app/k2", "2"), put("app/k1", "1b"), put("app/k3", "3"))
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if kv.commits != 1 || kv.locks != 4 {
		t.Errorf("a group of 5 writes of 4 records: %d commits and %d lock transactions, want 1 and 4", kv.commits, kv.locks)
	}
	other := v.open(t)
	wantRecord(t, other, "app/k0", "new", 2)
	wantRecord(t, other, "app/k1", "1b", 2)
	wantRecord(t, other, "app/k3", "3", 1)
	raw := v.c.Client(t)
	if resp, err := raw.Get(context.Background(), v.prefix+"lock/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
		t.Errorf("lock keys after the commit: %v, %v", resp, err)
	}
}

// A group's commit whose answer was lost is found by its token: a success.
func TestEtcdGroupLostCommitAnswer(t *testing.T) {
	v := newFaultVault(t, "/arca/grouplost/")
	e := v.open(t)
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: puts("written")}
	g := newGroup(t, e)
	addAll(t, g, put("app/a", "a"), put("app/b", "b"))
	if err := g.Commit(context.Background()); err != nil {
		t.Fatalf("a commit that landed without an answer: %v", err)
	}
	wantRecord(t, v.open(t), "app/b", "b", 1)
}

// A group whose locks lapsed and whose records another writer changed
// meanwhile fails whole: nothing of it lands, the other write stands.
func TestEtcdGroupConflictLandsNothing(t *testing.T) {
	v := newFaultVault(t, "/arca/groupconflict/")
	e1, e2 := v.open(t), v.open(t)
	raw := v.c.Client(t)
	g := newGroup(t, e1)
	addAll(t, g, put("app/a", "a"), put("app/b", "b"))
	if _, err := raw.Delete(context.Background(), v.prefix+"lock/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := putValue(e2, "app/b", "other", nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(context.Background()); !errors.Is(err, errConflict) {
		t.Fatalf("Commit after another writer went ahead: %v, want the conflict", err)
	}
	if _, err := e2.Get(context.Background(), "app/a"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("a write of the failed group landed: %v", err)
	}
	wantRecord(t, e2, "app/b", "other", 1)
}

// A group never waits on a lock another writer holds while it holds one
// of its own: that write answers ErrCommitFirst, unprepared and
// unapproved, and a new group takes it once the other writer is done.
// Abort lets go of the group's locks.
func TestEtcdGroupDoesNotWaitHoldingLocks(t *testing.T) {
	v := newFaultVault(t, "/arca/groupwait/")
	e1, e2 := v.open(t), v.open(t)
	g2 := newGroup(t, e2)
	addAll(t, g2, put("app/b", "by e2"))
	g1 := newGroup(t, e1)
	addAll(t, g1, put("app/a", "a"))
	approved := false
	if _, err := g1.Add(context.Background(), put("app/b", "by e1"), func(vault.Meta) error { approved = true; return nil }); !errors.Is(err, vault.ErrCommitFirst) || approved {
		t.Fatalf("a write of a record another group holds: %v, approved %t; want ErrCommitFirst unapproved", err, approved)
	}
	if err := g2.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g1.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	g1 = newGroup(t, e1)
	addAll(t, g1, put("app/b", "by e1"))
	g1.Abort()
	if m, err := putValue(e2, "app/b", "after", nil); err != nil || m.Version != 2 {
		t.Fatalf("a put after an aborted group: %+v, %v", m, err)
	}
	wantRecord(t, e1, "app/a", "a", 1)
}

// A group holds at most maxGroupWrites writes; the next answers
// ErrCommitFirst.
func TestEtcdGroupIsBounded(t *testing.T) {
	v := newFaultVault(t, "/arca/groupfull/")
	e := v.open(t)
	g := newGroup(t, e)
	for i := range maxGroupWrites {
		addAll(t, g, put(fmt.Sprintf("app/k%03d", i), "v"))
	}
	if _, err := g.Add(context.Background(), put("app/one-more", "v"), allow); !errors.Is(err, vault.ErrCommitFirst) {
		t.Fatalf("write %d of a group: %v, want ErrCommitFirst", maxGroupWrites+1, err)
	}
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ms, err := v.open(t).List(context.Background()); err != nil || len(ms) != maxGroupWrites {
		t.Fatalf("after a full group: %d records, %v", len(ms), err)
	}
}
