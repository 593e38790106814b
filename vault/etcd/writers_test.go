package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// writeGroup writes names as reserved groups of e, each a put of value,
// as ops.Writes does: a write that answers ErrCommitFirst (its record held
// elsewhere, with writes in hand) goes in the next group, which reserves
// the rest. It answers the versions the writes left, in order.
func writeGroup(ctx context.Context, e *Vault, value string, names ...string) ([]uint64, error) {
	var vs []uint64
	for len(names) > 0 {
		g, err := e.Group(ctx)
		if err != nil {
			return vs, err
		}
		if err := g.(vault.Reserver).Reserve(ctx, names); err != nil {
			g.Abort()
			return vs, err
		}
		n := 0
		for ; n < len(names); n++ {
			m, err := g.Add(ctx, put(names[n], value), allow)
			if n > 0 && errors.Is(err, vault.ErrCommitFirst) {
				break
			}
			if err != nil {
				g.Abort()
				return vs, fmt.Errorf("add %s: %w", names[n], err)
			}
			vs = append(vs, m.Version)
		}
		if err := g.Commit(ctx); err != nil {
			return vs, err
		}
		names = names[n:]
	}
	return vs, nil
}

// Writers of different records never wait for each other: sixteen
// handles each reserve records of their own and hold them, all at once,
// in one goroutine (a reservation that waited would never return).
func TestEtcdWritersOfDifferentRecordsDoNotWait(t *testing.T) {
	v := newFaultVault(t, "/arca/distinct/")
	ctx := context.Background()
	var groups []vault.Group
	for i := range 16 {
		e := v.open(t)
		g := newGroup(t, e)
		names := []string{fmt.Sprintf("w%d/a", i), fmt.Sprintf("w%d/b", i)}
		if err := g.(vault.Reserver).Reserve(ctx, names); err != nil {
			t.Fatalf("writer %d's reservation while %d others hold theirs: %v", i, i, err)
		}
		addAll(t, g, put(names[0], "a"), put(names[1], "b"))
		groups = append(groups, g)
	}
	if n := lockKeys(t, v); n != 32 {
		t.Errorf("lock keys while 16 writers hold 2 records each: %d, want 32", n)
	}
	for i, g := range groups {
		if err := g.Commit(ctx); err != nil {
			t.Fatalf("writer %d's commit: %v", i, err)
		}
	}
	other := v.open(t)
	for i := range 16 {
		wantRecord(t, other, fmt.Sprintf("w%d/b", i), "b", 1)
	}
}

// Writers of one record take turns: sixteen handles writing it at once,
// ten groups each, are all answered before their deadline, each sees the
// versions it wrote rise, and no write is lost: the record ends at the
// sum of them.
func TestEtcdWritersOfOneRecordTakeTurns(t *testing.T) {
	v := newFaultVault(t, "/arca/onerecord/")
	const writers, rounds = 16, 10
	errs := make(chan error, writers)
	for i := range writers {
		e := v.openTimeout(t, 20*time.Second)
		go func() {
			var last uint64
			for r := range rounds {
				vs, err := writeGroup(context.Background(), e, fmt.Sprintf("%d-%d", i, r), "shared/hot")
				if err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", i, r, err)
					return
				}
				if vs[0] <= last {
					errs <- fmt.Errorf("writer %d, round %d: version %d after %d", i, r, vs[0], last)
					return
				}
				last = vs[0]
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got, err := v.open(t).Get(context.Background(), "shared/hot")
	if err != nil || got.Version != writers*rounds {
		t.Fatalf("the shared record after %d writes: version %d, %v", writers*rounds, got.Version, err)
	}
	if n := lockKeys(t, v); n > writers {
		t.Errorf("lock keys after every writer is done: %d, more than one per writer", n)
	}
}

// Groups that lock overlapping records in opposite orders never wait for
// each other in a circle: every group of every writer commits.
func TestEtcdOverlappingGroupsNeverDeadlock(t *testing.T) {
	v := newFaultVault(t, "/arca/overlap/")
	orders := [][]string{
		{"o/a", "o/b", "o/c"}, {"o/c", "o/b", "o/a"}, {"o/b", "o/d"}, {"o/d", "o/a"},
		{"o/a", "o/d", "o/b"}, {"o/c", "o/d"}, {"o/d", "o/c", "o/b", "o/a"}, {"o/b", "o/a"},
	}
	const rounds = 8
	errs := make(chan error, len(orders))
	writes := map[string]uint64{}
	for _, names := range orders {
		for _, n := range names {
			writes[n] += rounds
		}
	}
	for i, names := range orders {
		e := v.openTimeout(t, 20*time.Second)
		go func() {
			for r := range rounds {
				// Without Reserve half the time: locks taken one by one.
				if _, err := groupOf(e, r%2 == 0, names); err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", i, r, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range orders {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	other := v.open(t)
	for n, want := range writes {
		if got, err := other.Get(context.Background(), n); err != nil || got.Version != want {
			t.Errorf("%s: version %d, %v; want %d", n, got.Version, err, want)
		}
	}
}

// groupOf writes names as one group of e, reserved or not. A write that
// answers ErrCommitFirst (another writer holds its record, and the group
// has writes in hand) goes in a group of its own after the commit, as
// ops.Writes does.
func groupOf(e *Vault, reserve bool, names []string) (int, error) {
	ctx := context.Background()
	if reserve {
		_, err := writeGroup(ctx, e, "v", names...)
		return 1, err
	}
	groups := 0
	for len(names) > 0 {
		g, err := e.Group(ctx)
		if err != nil {
			return groups, err
		}
		groups++
		n := 0
		for ; n < len(names); n++ {
			if _, err := g.Add(ctx, put(names[n], "v"), allow); err != nil {
				if n > 0 && errorsIsCommitFirst(err) {
					break
				}
				g.Abort()
				return groups, err
			}
		}
		if err := g.Commit(ctx); err != nil {
			return groups, err
		}
		names = names[n:]
	}
	return groups, nil
}

func errorsIsCommitFirst(err error) bool { return errors.Is(err, vault.ErrCommitFirst) }

// A writer that dies holding a record's lock (its lease lapses: revoked
// here, as the cluster does once its keep-alives stop) holds up the
// writers queued behind it only until then: each is let in, in turn, and
// none is lost.
func TestEtcdHolderDiesWithWritersQueued(t *testing.T) {
	v := newFaultVault(t, "/arca/holderdies/")
	holder := v.open(t)
	g := reservedGroup(t, holder, "shared/x")
	addAll(t, g, put("shared/x", "never"))
	const waiters = 6
	errs := make(chan error, waiters)
	for i := range waiters {
		e := v.openTimeout(t, 20*time.Second)
		go func() {
			_, err := writeGroup(context.Background(), e, fmt.Sprint(i), "shared/x")
			errs <- err
		}()
	}
	waitLockKeys(t, v, waiters+1, g)
	if _, err := v.c.Client(t).Revoke(context.Background(), holder.sess.Lease()); err != nil {
		g.Abort()
		t.Fatal(err)
	}
	for range waiters {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := g.Commit(context.Background()); err == nil {
		t.Error("the dead holder's group committed after its lease went")
	}
	if got, err := v.open(t).Get(context.Background(), "shared/x"); err != nil || got.Version != waiters {
		t.Fatalf("shared/x after %d queued writes: version %d, %v", waiters, got.Version, err)
	}
}

// A commit that must first let go of many locks left from before (more
// than its own transaction has room for), and whose release gets no
// answer, ends the session and fails whole: the locks it read under may be
// gone. It does not go on to commit without a session.
func TestEtcdCommitAfterALostReleaseFails(t *testing.T) {
	v := newFaultVault(t, "/arca/lostrelease/")
	e := v.open(t)
	e.holdFor = time.Hour
	if _, err := writeGroup(context.Background(), e, "v", "a/0", "a/1"); err != nil {
		t.Fatal(err)
	}
	names := make([]string, maxLockSlots)
	for i := range names {
		names[i] = fmt.Sprintf("b/%d", i)
	}
	g := reservedGroup(t, e, names...)
	addAll(t, g, put("b/0", "v"))
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: func(then []clientv3.Op) bool {
		return len(then) > 0 && then[0].IsDelete()
	}}
	if err := g.Commit(context.Background()); !errors.Is(err, errLeaseLapsed) {
		t.Fatalf("a commit after its release of %d locks went unanswered: %v, want the lapsed lease", maxLockSlots+1, err)
	}
	if _, err := v.open(t).Get(context.Background(), "b/0"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("b/0 after the failed commit: %v, want not found", err)
	}
}

// A reservation waits only for its first record: a later one another
// writer holds is left to its write, which then answers ErrCommitFirst
// (the group commits and the write starts the next), so the first write
// is not held up by a record it does not write.
func TestEtcdReserveDoesNotWaitForALaterRecord(t *testing.T) {
	v := newFaultVault(t, "/arca/reservehol/")
	e1, e2 := v.open(t), v.open(t)
	e1.holdFor = time.Hour
	g1 := newGroup(t, e1)
	addAll(t, g1, put("app/b", "by e1"))
	e2.timeout = 2 * time.Second
	ctx := context.Background()
	g2 := reservedGroup(t, e2, "app/a", "app/b")
	if _, err := g2.Add(ctx, put("app/a", "by e2"), allow); err != nil {
		g2.Abort()
		g1.Abort()
		t.Fatalf("the reserved write of a free record: %v", err)
	}
	approved := false
	if _, err := g2.Add(ctx, put("app/b", "by e2"), func(vault.Meta) error { approved = true; return nil }); !errors.Is(err, vault.ErrCommitFirst) || approved {
		g2.Abort()
		g1.Abort()
		t.Fatalf("a write of the record another writer holds: %v, approved %t; want ErrCommitFirst unapproved", err, approved)
	}
	if err := g2.Commit(ctx); err != nil {
		g1.Abort()
		t.Fatal(err)
	}
	if n := lockKeys(t, v); n != 2 {
		t.Errorf("lock keys after the reservation: %d, want e1's and e2's app/a", n)
	}
	if err := g1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantRecord(t, e1, "app/a", "by e2", 1)
	wantRecord(t, e1, "app/b", "by e1", 1)
}
