package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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

// lockKeys counts the keys in v's record lock queues: the holders' and
// those waiting.
func lockKeys(t *testing.T, v faultVault) int64 {
	t.Helper()
	resp, err := v.c.Client(t).Get(context.Background(), v.prefix+"lock/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// waitLockKeys waits, up to 5 s, until v has n record lock keys, counting
// them again at each change a watch on the lock's keys reports. Groups
// still open are aborted before it fails, so that the test's cleanup can
// close their handles.
func waitLockKeys(t *testing.T, v faultVault, n int64, open ...vault.Group) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		for _, g := range open {
			g.Abort()
		}
		t.Fatalf(format, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cli, keys := v.c.Client(t), v.prefix+"lock/"
	resp, err := cli.Get(ctx, keys, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		fail("count the lock keys: %v", err)
	}
	changes := cli.Watch(ctx, keys, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	for resp.Count != n {
		if wr, ok := <-changes; !ok || wr.Err() != nil {
			fail("lock keys: %d, want %d", resp.Count, n)
		}
		if resp, err = cli.Get(ctx, keys, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
			fail("count the lock keys: %v", err)
		}
	}
}

// A group of n writes that reserves its records is one commit after one
// lock transaction; a group that follows while the handle still holds the
// locks of the records it writes is its commit alone, and a new record
// costs its lock transaction. The locks are let go of once unused for
// holdFor, and with the handle. Without Reserve, each record's lock is
// taken as its first write comes.
func TestEtcdGroupIsOneCommit(t *testing.T) {
	v := newFaultVault(t, "/arca/group/")
	e := v.open(t)
	e.holdFor = time.Hour
	first := v.open(t)
	if _, err := putValue(first, "app/k0", "old", nil); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil { // and its lock with it
		t.Fatal(err)
	}
	kv := &countingKV{KV: e.cli.KV}
	e.cli.KV = kv
	counts := func(what string, commits, locks int) {
		t.Helper()
		if kv.commits != commits || kv.locks != locks {
			t.Errorf("%s: %d commits and %d lock transactions in all, want %d and %d", what, kv.commits, kv.locks, commits, locks)
		}
	}
	g := reservedGroup(t, e, "app/k0", "app/k1", "app/k2", "app/k1", "app/k3")
	addAll(t, g, put("app/k0", "new"), put("app/k1", "1"), put("app/k2", "2"), put("app/k1", "1b"), put("app/k3", "3"))
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	counts("a reserved group of 5 writes of 4 records", 1, 1)
	g = reservedGroup(t, e, "app/k0", "app/k1")
	addAll(t, g, put("app/k0", "newer"), put("app/k1", "1c"))
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	counts("a second group of records whose locks it holds", 2, 1)
	if n := lockKeys(t, v); n != 2 {
		t.Errorf("lock keys after the second group: %d, want its 2 (those it no longer uses let go by its commit)", n)
	}
	g = newGroup(t, e)
	addAll(t, g, put("app/k1", "1d"), put("app/k4", "4"), put("app/k5", "5"))
	if err := g.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	counts("a group without Reserve, of one held record and two new ones", 3, 3)
	other := v.open(t)
	wantRecord(t, other, "app/k0", "newer", 3)
	wantRecord(t, other, "app/k1", "1d", 4)
	wantRecord(t, other, "app/k3", "3", 1)
	e.mu.Lock()
	e.holdFor = 10 * time.Millisecond
	e.armRelease()
	e.mu.Unlock()
	waitLockKeys(t, v, 0)
	if _, err := putValue(e, "app/k5", "5b", nil); err != nil {
		t.Fatal(err)
	}
	counts("a put after the locks were let go", 4, 4)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := lockKeys(t, v); n != 0 {
		t.Errorf("lock keys after the holder closed: %d, want 0", n)
	}
}

// reservedGroup is a group of e that reserved names.
func reservedGroup(t *testing.T, e *Vault, names ...string) vault.Group {
	t.Helper()
	g := newGroup(t, e)
	if err := g.(vault.Reserver).Reserve(context.Background(), names); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	return g
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

// A writer that finds a record's lock held waits its turn, and is let in
// at the holder's next commit (the holder keeps its locks an hour here
// otherwise); a holder that is idle lets it in once holdFor has passed. A
// writer of another record does not wait at all.
func TestEtcdWaiterIsLetInAtTheCommit(t *testing.T) {
	v := newFaultVault(t, "/arca/groupwait/")
	e1, e2, e3 := v.open(t), v.open(t), v.open(t)
	e1.holdFor, e3.holdFor = time.Hour, time.Hour
	g1 := newGroup(t, e1)
	addAll(t, g1, put("app/a", "by e1"), put("app/b", "by e1"))
	if _, err := putValue(e3, "app/c", "by e3", nil); err != nil {
		g1.Abort()
		t.Fatalf("a writer of another record while e1 holds two: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		m, err := putValue(e2, "app/b", "by e2", nil)
		if err == nil && m.Version != 2 {
			err = fmt.Errorf("e2's put is version %d, want 2", m.Version)
		}
		done <- err
	}()
	waitLockKeys(t, v, 4, g1) // e1's two, e3's (idle, kept) and e2's, queued
	select {
	case err := <-done:
		g1.Abort()
		t.Fatalf("e2's put ended while e1 held the lock: %v", err)
	default:
	}
	if err := g1.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantRecord(t, e1, "app/a", "by e1", 1)
	wantRecord(t, e1, "app/b", "by e2", 2)

	// e2 now holds app/b's lock, idle, for holdIdle: e1 waits that long at most.
	if m, err := putValue(e1, "app/b", "again", nil); err != nil || m.Version != 3 {
		t.Fatalf("e1 after e2 went idle: %+v, %v", m, err)
	}
}

// A writer still waiting at its deadline fails, takes its key back from
// the queue, and the holder is not disturbed.
func TestEtcdWaiterGivesUpAtTheDeadline(t *testing.T) {
	v := newFaultVault(t, "/arca/waitdeadline/")
	e1, e2 := v.open(t), v.open(t)
	g1 := newGroup(t, e1)
	addAll(t, g1, put("app/a", "by e1"))
	e2.timeout = time.Second
	if _, err := putValue(e2, "app/a", "by e2", nil); err == nil || !strings.Contains(err.Error(), "held a record's lock past the deadline") {
		g1.Abort() // the group holds e1: end it before the cleanup closes e1
		t.Fatalf("a put that waited past its deadline: %v", err)
	}
	if n := lockKeys(t, v); n != 1 {
		t.Errorf("lock keys after the waiter gave up: %d, want the holder's alone", n)
	}
	if err := g1.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRecord(t, e2, "app/a", "by e1", 1)
}

// A group with writes in hand does not wait: a write of a record another
// writer holds answers ErrCommitFirst, unprepared and unapproved. A group
// whose lock went (deleted, as when its lease lapses) loses its commit
// whole if another writer went ahead meanwhile.
func TestEtcdGroupLostLockTakesNoMore(t *testing.T) {
	v := newFaultVault(t, "/arca/grouplostlock/")
	e1, e2, e3 := v.open(t), v.open(t), v.open(t)
	g := newGroup(t, e1)
	addAll(t, g, put("app/a", "a"))
	g3 := newGroup(t, e3)
	addAll(t, g3, put("app/b", "by e3"))
	approved := false
	if _, err := g.Add(context.Background(), put("app/b", "b"), func(vault.Meta) error { approved = true; return nil }); !errors.Is(err, vault.ErrCommitFirst) || approved {
		g.Abort()
		g3.Abort()
		t.Fatalf("a write of a record another writer holds: %v, approved %t; want ErrCommitFirst unapproved", err, approved)
	}
	if err := g3.Commit(context.Background()); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	if _, err := v.c.Client(t).Delete(context.Background(), v.prefix+"lock/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := putValue(e2, "app/a", "other", nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(context.Background()); !errors.Is(err, errConflict) {
		t.Fatalf("Commit after another writer went ahead: %v, want the conflict", err)
	}
	wantRecord(t, e1, "app/a", "other", 1)
	wantRecord(t, e1, "app/b", "by e3", 1)
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

// A group open while another handle rekeys the vault commits nothing: its
// records were sealed under the key the rekey replaced. The write after
// the rekey answers ErrCommitFirst, the commit the conflict, and the vault
// stays whole.
func TestEtcdGroupAcrossARekey(t *testing.T) {
	v := newFaultVault(t, "/arca/grouprekey/")
	e1, e2 := v.open(t), v.open(t)
	if _, err := putValue(e2, "app/old", "o", nil); err != nil {
		t.Fatal(err)
	}
	g := newGroup(t, e1)
	addAll(t, g, put("app/a", "a"))
	if _, err := e2.Rekey(context.Background()); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	if _, err := g.Add(context.Background(), put("app/b", "b"), allow); !errors.Is(err, vault.ErrCommitFirst) {
		g.Abort()
		t.Fatalf("a write after the rekey: %v, want ErrCommitFirst", err)
	}
	if err := g.Commit(context.Background()); !errors.Is(err, errConflict) {
		t.Fatalf("Commit of a group sealed under the replaced key: %v, want the conflict", err)
	}
	e3 := v.open(t)
	if _, err := e3.Get(context.Background(), "app/a"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("app/a after the failed group: %v, want not found", err)
	}
	if ms, err := e3.List(context.Background()); err != nil || len(ms) != 1 {
		t.Fatalf("list after the failed group: %v, %v; want app/old alone", ms, err)
	}
	if m, err := putValue(e1, "app/a", "a", nil); err != nil || m.Version != 1 {
		t.Fatalf("the write again, alone: %+v, %v", m, err)
	}
}

// Writes that fail under the lock (here, every one denied) do not put off
// its release: a waiter is let in once holdFor has passed since the
// holder took it, however often the holder keeps failing.
func TestEtcdFailingWritesDoNotKeepTheLock(t *testing.T) {
	v := newFaultVault(t, "/arca/failhold/")
	e1, e2 := v.open(t), v.open(t)
	if _, err := putValue(e1, "app/a", "a", nil); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	deny := func(vault.Meta) error { return errors.New("denied") }
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = putValue(e1, "app/a", "x", deny) // back to back, as often as it can
		}
	}()
	e2.timeout = time.Second
	_, err := putValue(e2, "app/b", "b", nil)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("a waiter while the holder's writes kept failing: %v", err)
	}
}

// A handle whose lock lapsed while a release was armed takes a lock
// again with a release of its own: a write it then fails (denied) lets
// the lock go after holdFor, not at some later commit.
func TestEtcdLapsedLockLeavesNoStaleTimer(t *testing.T) {
	v := newFaultVault(t, "/arca/staletimer/")
	e1, e2 := v.open(t), v.open(t)
	e1.holdFor = 300 * time.Millisecond
	e2.holdFor = 10 * time.Millisecond
	disarmed := make(chan struct{}, 1)
	e1.disarmed = func() {
		select {
		case disarmed <- struct{}{}:
		default:
		}
	}
	if _, err := putValue(e1, "app/a", "a", nil); err != nil { // arms e1's release
		t.Fatal(err)
	}
	// e1's key goes, as when its lease lapses, and e2 takes the lock of
	// the record e1 writes next.
	if _, err := v.c.Client(t).Delete(context.Background(), v.prefix+"lock/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	g := newGroup(t, e2)
	addAll(t, g, put("app/b", "x"))
	e1.timeout = 100 * time.Millisecond
	_, err := putValue(e1, "app/b", "b", nil)
	select { // e1's old release is done with: stopped, or run out with nothing held
	case <-disarmed:
	case <-time.After(5 * time.Second):
		g.Abort()
		t.Fatal("e1's old release is still armed")
	}
	e1.mu.Lock()
	e1.disarmed = nil
	e1.mu.Unlock()
	if cerr := g.Commit(context.Background()); cerr != nil || err == nil {
		t.Fatalf("e1's put while e2 held the lock: %v (want the deadline); e2's commit: %v", err, cerr)
	}
	waitLockKeys(t, v, 0)
	e1.timeout = 3 * time.Second
	if _, err := putValue(e1, "app/a", "z", func(vault.Meta) error { return errors.New("denied") }); err == nil {
		t.Fatal("a denied put succeeded")
	}
	waitLockKeys(t, v, 0)
}

// A group whose handle's lease is gone takes no more writes, and its
// commit is refused whole, and says so: not an unknown outcome.
func TestEtcdGroupLeaseGone(t *testing.T) {
	v := newFaultVault(t, "/arca/groupleasegone/")
	e1 := v.open(t)
	g := newGroup(t, e1)
	addAll(t, g, put("app/a", "a"))
	if _, err := v.c.Client(t).Revoke(context.Background(), e1.sess.Lease()); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	if _, err := g.Add(context.Background(), put("app/b", "b"), allow); !errors.Is(err, vault.ErrCommitFirst) {
		g.Abort()
		t.Fatalf("a write after the lease went: %v, want ErrCommitFirst", err)
	}
	if err := g.Commit(context.Background()); !errors.Is(err, errLeaseLapsed) || errors.Is(err, vault.ErrUnknownOutcome) {
		t.Fatalf("Commit after the lease went: %v, want the lapsed lease", err)
	}
	if _, err := v.open(t).Get(context.Background(), "app/a"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("app/a after the refused commit: %v, want not found", err)
	}
}

// A group whose handle's lease is gone takes no more writes, reserved
// ones included: the write of a reserved record is not approved (audited)
// when its lock went with the lease, since its commit cannot land.
func TestEtcdReservedWriteAfterTheLeaseWent(t *testing.T) {
	v := newFaultVault(t, "/arca/reservedleasegone/")
	e1 := v.open(t)
	ctx := context.Background()
	g := reservedGroup(t, e1, "app/a", "app/b")
	addAll(t, g, put("app/a", "a"))
	if _, err := v.c.Client(t).Revoke(ctx, e1.sess.Lease()); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	<-e1.sess.Done()
	approved := false
	_, err := g.Add(ctx, put("app/b", "b"), func(vault.Meta) error { approved = true; return nil })
	cerr := g.Commit(ctx)
	if approved || !errors.Is(err, vault.ErrCommitFirst) {
		t.Fatalf("a reserved write after the lease went: %v, approved %t (commit: %v); want ErrCommitFirst unapproved", err, approved, cerr)
	}
}

// A group at the bound commits within etcd's default of 128 operations a
// transaction however many locks its handle held before: 40 records
// written, 40 queues counted and 40 locks left from an earlier group let
// go of in the one commit; and when more were left, they go first, apart.
func TestEtcdGroupAtTheBoundWithLocksLeftOver(t *testing.T) {
	v := newFaultVault(t, "/arca/groupbound/")
	e := v.open(t)
	e.holdFor = time.Hour
	ctx := context.Background()
	names := func(p string) []string {
		ns := make([]string, maxGroupWrites)
		for i := range ns {
			ns[i] = fmt.Sprintf("app/%s%02d", p, i)
		}
		return ns
	}
	for _, sets := range [][]string{{"a"}, {"b"}, {"c", "d"}} {
		reserve := names(sets[0])
		writes := names(sets[len(sets)-1])
		g := reservedGroup(t, e, reserve...)
		for _, n := range writes {
			addAll(t, g, put(n, "v"))
		}
		if err := g.Commit(ctx); err != nil {
			t.Fatalf("a full group (reserved %s, wrote %s) with %d locks held: %v", sets[0], sets[len(sets)-1], len(e.locks), err)
		}
	}
	if ms, err := v.open(t).List(ctx); err != nil || len(ms) != 3*maxGroupWrites {
		t.Fatalf("after three full groups: %d records, %v", len(ms), err)
	}
	if n := lockKeys(t, v); n != maxGroupWrites {
		t.Errorf("lock keys after the last group: %d, want its %d", n, maxGroupWrites)
	}
}
