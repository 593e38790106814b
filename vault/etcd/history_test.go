package etcd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/identity"
)

var approveAny = func(vault.Meta) error { return nil }

func mustApply(t testing.TB, e *etcd.Vault, w vault.Write) vault.Meta {
	t.Helper()
	m, err := e.Apply(context.Background(), w, approveAny)
	if err != nil {
		t.Fatalf("Apply(kind %d, %s): %v", w.Kind, w.Name, err)
	}
	return m
}

func put(name, value string) vault.Write {
	return vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))}
}

// rawValue is the value of key as stored.
func rawValue(t *testing.T, cli *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := cli.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw read of a record key: %d keys, %v", len(resp.Kvs), err)
	}
	return resp.Kvs[0].Value
}

func keyOf(t *testing.T, e *etcd.Vault, name string) string {
	t.Helper()
	k, err := e.KeyOf(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A record a vault held before history is read as it is, its chain the
// record alone; its next write makes it a chain that keeps it.
func TestEtcdLegacyRecordUpgradedOnWrite(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/legacy/")
	e := v.open(t)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	old := vault.Record{Meta: vault.Meta{Name: "app/db", Version: 4, CreatedAt: t0, UpdatedAt: t0}, Value: vault.NewSecret([]byte("legacy"))}
	if err := e.PutLegacy(ctx, old); err != nil {
		t.Fatal(err)
	}
	key := keyOf(t, e, "app/db")
	if strings.HasPrefix(string(rawValue(t, c.Client(t), key)), "arca-chain") {
		t.Fatal("the legacy record was stored as a chain")
	}
	r := v.open(t)
	got, err := r.Get(ctx, "app/db")
	if err != nil || got.Version != 4 || !got.Value.Equal(old.Value) {
		t.Fatalf("Get of a legacy record: version %d, %v", got.Version, err)
	}
	ch, err := r.Chain(ctx, "app/db")
	if err != nil || !ch.HasCurrent || ch.Current.Version != 4 || len(ch.Previous) != 0 || ch.Highest != 4 {
		t.Fatalf("Chain of a legacy record: %+v, %v", ch.Versions(), err)
	}
	if metas, err := r.List(ctx); err != nil || len(metas) != 1 || metas[0].Version != 4 {
		t.Fatalf("List: %v, %v", metas, err)
	}
	m := mustApply(t, r, put("app/db", "new"))
	if m.Version != 5 || !m.CreatedAt.Equal(t0) {
		t.Fatalf("put over a legacy record: %+v", m)
	}
	if !strings.HasPrefix(string(rawValue(t, c.Client(t), key)), "arca-chain-v1\x00") {
		t.Fatal("a write left the name in the legacy form")
	}
	ch, err = v.open(t).Chain(ctx, "app/db")
	if err != nil || ch.Current.Version != 5 || len(ch.Previous) != 1 || ch.Previous[0].Version != 4 || !ch.Previous[0].Value.Equal(old.Value) {
		t.Fatalf("Chain after the upgrade: %+v, %v", ch.Versions(), err)
	}
}

// A name's value moved to another name's key fails to authenticate, and
// an earlier current record put back beside a later history part is
// refused: neither is ever read as a value.
func TestEtcdHistoryTamper(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/histtamper/")
	e := v.open(t)
	cli := c.Client(t)
	ctx := context.Background()
	for _, w := range []vault.Write{put("app/a", "a1"), put("app/a", "a2"), put("app/b", "b1")} {
		mustApply(t, e, w)
	}
	ka, kb := keyOf(t, e, "app/a"), keyOf(t, e, "app/b")
	va, vb := rawValue(t, cli, ka), rawValue(t, cli, kb)

	// Swapped between the two keys.
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut(ka, string(vb)), clientv3.OpPut(kb, string(va))).Commit(); err != nil {
		t.Fatal(err)
	}
	r := v.open(t)
	for _, name := range []string{"app/a", "app/b"} {
		if _, err := r.Get(ctx, name); err == nil || errors.Is(err, vault.ErrNotFound) {
			t.Errorf("Get of %s holding the other's value: %v", name, err)
		}
		if _, err := r.Chain(ctx, name); err == nil || errors.Is(err, vault.ErrNotFound) {
			t.Errorf("Chain of %s holding the other's value: %v", name, err)
		}
	}
	if rep, err := r.Check(ctx); err != nil || len(rep.Problems) == 0 {
		t.Errorf("Check of swapped values: %v, %v", rep.Problems, err)
	}

	// An earlier current record beside the later history part.
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut(ka, string(va)), clientv3.OpPut(kb, string(vb))).Commit(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, r, put("app/a", "a3"))
	stale := etcd.JoinParts(va, rawValue(t, cli, ka)) // version 2 beside version 3's history
	if _, err := cli.Put(ctx, ka, string(stale)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Chain(ctx, "app/a"); err == nil || errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Chain of an earlier current record beside a later history: %v", err)
	}
	if _, err := r.Apply(ctx, put("app/a", "a4"), approveAny); err == nil {
		t.Error("a put over an earlier current record beside a later history succeeded")
	}
	if rep, err := r.Check(ctx); err != nil || len(rep.Problems) == 0 {
		t.Errorf("Check of a replayed current record: %v, %v", rep.Problems, err)
	}
}

// changesOf polls until a reply is not truncated, and returns each
// reply's changes and the last cursor.
func changesOf(t *testing.T, e *etcd.Vault, since string, limit int) ([][]vault.Change, string) {
	t.Helper()
	var pages [][]vault.Change
	for {
		ch, err := e.Changes(context.Background(), since, limit)
		if err != nil {
			t.Fatalf("Changes(%q): %v", since, err)
		}
		if ch.Reset {
			t.Fatalf("Changes(%q): reset", since)
		}
		pages = append(pages, ch.Changes)
		since = ch.Cursor
		if !ch.Truncated {
			return pages, since
		}
	}
}

func TestEtcdChanges(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/changes/")
	e := v.open(t)
	ctx := context.Background()
	start, err := e.Changes(ctx, "", 0)
	if err != nil || start.Cursor == "" || len(start.Changes) != 0 || start.Reset || start.Truncated {
		t.Fatalf("Changes without a cursor: %+v, %v", start, err)
	}
	if again, err := e.Changes(ctx, start.Cursor, 0); err != nil || len(again.Changes) != 0 || again.Reset {
		t.Fatalf("nothing changed: %+v, %v", again, err)
	}

	mustApply(t, e, put("app/a", "1"))
	mustApply(t, e, put("app/b", "1"))
	mustApply(t, e, put("app/a", "2"))
	pages, cur := changesOf(t, e, start.Cursor, 0)
	if got := pages[0]; len(pages) != 1 || len(got) != 2 || got[0].Name != "app/b" || got[1].Name != "app/a" || got[1].Version != 2 || got[1].State != vault.StateCurrent {
		t.Fatalf("changes after three puts: %+v", pages)
	}

	// A batch lands 100 names at one revision; read back 7 at a time,
	// each is reported once.
	ws := make([]vault.Write, 100)
	for i := range ws {
		ws[i] = put(fmt.Sprintf("batch/n%03d", i), "x")
	}
	if n, err := e.ApplyBatch(ctx, vault.Writes(ws), func([]vault.Meta) error { return nil }); err != nil || n != 100 {
		t.Fatalf("batch: %d, %v", n, err)
	}
	mustApply(t, e, vault.Write{Kind: vault.Remove, Name: "app/b"})
	pages, cur = changesOf(t, e, cur, 7)
	seen := map[string]vault.Change{}
	for _, p := range pages {
		if len(p) > 7 {
			t.Fatalf("a reply of %d changes with limit 7", len(p))
		}
		for _, ch := range p {
			if _, twice := seen[ch.Name]; twice {
				t.Errorf("%s reported twice", ch.Name)
			}
			seen[ch.Name] = ch
		}
	}
	if len(seen) != 101 || len(pages) != 15 {
		t.Fatalf("%d names in %d replies, want 101 in 15", len(seen), len(pages))
	}
	if last := pages[len(pages)-1]; last[len(last)-1].Name != "app/b" || last[len(last)-1].State != vault.StateDeleted || last[len(last)-1].Version != 1 {
		t.Errorf("the rm, reported last: %+v", last)
	}

	// Destroyed whole: erased, its highest version kept.
	mustApply(t, e, vault.Write{Kind: vault.Destroy, Name: "app/b"})
	pages, cur = changesOf(t, e, cur, 0)
	if got := pages[0]; len(got) != 1 || got[0].State != vault.StateErased || got[0].Version != 1 {
		t.Fatalf("changes after a destroy: %+v", pages)
	}
	if _, err := e.Get(ctx, "app/b"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get of a destroyed name: %v", err)
	}
	if m := mustApply(t, e, put("app/b", "again")); m.Version != 2 || !m.Created {
		t.Errorf("put after a destroy: %+v", m)
	}

	for _, bad := range []string{"x", "e1..1.", strings.Replace(cur, "e1.", "e2.", 1), cur + "0", strings.ToUpper(cur), cur + ".", "e1." + strings.Repeat("0", 32) + ".01."} {
		if _, err := e.Changes(ctx, bad, 0); !errors.Is(err, vault.ErrBadCursor) {
			t.Errorf("Changes(%q): %v, want ErrBadCursor", bad, err)
		}
	}

	// A rekey moves every name: the cursor is reset.
	if _, err := e.Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	ch, err := v.open(t).Changes(ctx, cur, 0)
	if err != nil || !ch.Reset || len(ch.Changes) != 0 || ch.Cursor == cur {
		t.Fatalf("after a rekey: %+v, %v", ch, err)
	}
	if again, err := e.Changes(ctx, ch.Cursor, 0); err != nil || again.Reset || len(again.Changes) != 0 {
		t.Fatalf("the cursor a reset gave: %+v, %v", again, err)
	}
}

// settable is a clock a test moves.
type settable struct {
	mu sync.Mutex
	t  time.Time
}

func (s *settable) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

func (s *settable) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t = s.t.Add(d)
}

// Check erases the names soft-deleted longer than keep_deleted, and only
// those; their highest version is kept.
func TestEtcdCheckErasesExpired(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/expire/")
	clk := &settable{t: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	v.opts.Now = clk.now
	e := v.open(t)
	e.SetHistory(vault.History{MaxVersions: 3, KeepDeleted: time.Hour})
	ctx := context.Background()
	for _, w := range []vault.Write{put("app/old", "1"), put("app/old", "2"), put("app/new", "1"), put("app/live", "1")} {
		mustApply(t, e, w)
	}
	mustApply(t, e, vault.Write{Kind: vault.Remove, Name: "app/old"})
	clk.add(50 * time.Minute)
	mustApply(t, e, vault.Write{Kind: vault.Remove, Name: "app/new"})
	clk.add(20 * time.Minute)
	rep, err := e.Check(ctx)
	if err != nil || len(rep.Problems) != 0 || rep.Erased != 1 || rep.Records != 1 || rep.Versions != 1 {
		t.Fatalf("Check: %+v, %v", rep, err)
	}
	old, err := e.Chain(ctx, "app/old")
	if err != nil || old.HasCurrent || len(old.Previous) != 0 || old.Highest != 2 || old.Deleted() {
		t.Fatalf("the expired name: %+v, %v", old, err)
	}
	deleted, err := e.ListDeleted(ctx)
	if err != nil || len(deleted) != 1 || deleted[0].Name != "app/new" || deleted[0].Touch == nil || deleted[0].Touch.DeletedAt.IsZero() {
		t.Fatalf("ListDeleted: %+v, %v", deleted, err)
	}
	if rep, err := e.Check(ctx); err != nil || rep.Erased != 0 || len(rep.Problems) != 0 {
		t.Fatalf("a second check: %+v, %v", rep, err)
	}
	if m := mustApply(t, e, put("app/old", "3")); m.Version != 3 {
		t.Errorf("put after the erase: version %d, want 3", m.Version)
	}
}

// A rekey re-seals every kept version, soft delete and highest version.
func TestEtcdRekeyKeepsHistory(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/rekeyhist/")
	e := v.open(t)
	ctx := context.Background()
	for _, w := range []vault.Write{put("app/a", "1"), put("app/a", "2"), put("app/a", "3"), put("app/gone", "g"),
		{Kind: vault.Remove, Name: "app/gone"}, put("app/erased", "e"), {Kind: vault.Destroy, Name: "app/erased"}} {
		mustApply(t, e, w)
	}
	before, err := e.Chains(ctx)
	if err != nil || len(before) != 3 {
		t.Fatalf("Chains before: %d, %v", len(before), err)
	}
	if _, err := e.Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := v.open(t).Chains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(before, after, sameChain) {
		t.Fatalf("chains changed by the rekey:\n%+v\n%+v", before, after)
	}
	if rep, err := v.open(t).Check(ctx); err != nil || len(rep.Problems) != 0 || rep.Versions != 3 || rep.Records != 1 {
		t.Fatalf("Check after the rekey: %+v, %v", rep, err)
	}
}

func sameChain(a, b vault.Chain) bool {
	same := a.Name == b.Name && a.HasCurrent == b.HasCurrent && a.Highest == b.Highest &&
		a.DeletedAt.Equal(b.DeletedAt) && a.ChangedAt.Equal(b.ChangedAt) && len(a.Previous) == len(b.Previous)
	if a.HasCurrent && b.HasCurrent {
		same = same && a.Current.Version == b.Current.Version && a.Current.Value.Equal(b.Current.Value)
	}
	for i := range a.Previous {
		same = same && i < len(b.Previous) && a.Previous[i].Version == b.Previous[i].Version && a.Previous[i].Value.Equal(b.Previous[i].Value)
	}
	return same
}

// 50 writers on separate handles put with if_version the version they all
// read: exactly one wins; every other is a conflict naming the winner's
// version, and nothing else is written.
func TestEtcdIfVersionRace(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/ifversion/")
	seed := mustApply(t, v.open(t), put("app/db", "seed"))
	const writers = 50
	// The losers queue for the name's lock one after another: under -race
	// on two cores that takes longer than an op's default deadline, and
	// this test is of who wins, not of how fast.
	queued := v
	queued.opts.Timeout = time.Minute
	handles := make([]*etcd.Vault, writers)
	for i := range handles {
		handles[i] = queued.open(t)
	}
	type result struct {
		m   vault.Meta
		err error
	}
	results := make(chan result, writers)
	start := make(chan struct{})
	for i, h := range handles {
		go func() {
			<-start
			w := put("app/db", fmt.Sprintf("writer-%d", i))
			w.IfVersion = &seed.Version
			m, err := h.Apply(context.Background(), w, approveAny)
			results <- result{m, err}
		}()
	}
	close(start)
	var won []vault.Meta
	var conflicts []uint64
	for range writers {
		r := <-results
		var ce *vault.ConflictError
		switch {
		case r.err == nil:
			won = append(won, r.m)
		case errors.As(r.err, &ce):
			conflicts = append(conflicts, ce.Current)
		default:
			t.Errorf("a writer failed otherwise: %v", r.err)
		}
	}
	if len(won) != 1 || won[0].Version != seed.Version+1 {
		t.Fatalf("%d writers won (%+v), want exactly one, at version %d", len(won), won, seed.Version+1)
	}
	for _, cur := range conflicts {
		if cur != won[0].Version {
			t.Errorf("a conflict names version %d, want the winner's %d", cur, won[0].Version)
		}
	}
	ch, err := v.open(t).Chain(context.Background(), "app/db")
	if err != nil || ch.Current.Version != won[0].Version || len(ch.Previous) != 1 {
		t.Fatalf("after the race: %+v, %v", ch.Versions(), err)
	}
}

// headerFormat is the format field of the vault's header as stored.
func headerFormat(t *testing.T, cli *clientv3.Client, prefix string) string {
	t.Helper()
	var h struct {
		Format string `json:"format"`
	}
	resp, err := cli.Get(context.Background(), prefix+"vault")
	if err != nil || len(resp.Kvs) != 1 || json.Unmarshal(resp.Kvs[0].Value, &h) != nil {
		t.Fatalf("reading the header: %v", err)
	}
	return h.Format
}

// A vault made before history (header format 1) is read as it is; its
// first write moves it to format 2, which arca before history refuses,
// and a handle that loaded format 1 writes on after it.
func TestEtcdFormat1UpgradedOnFirstWrite(t *testing.T) {
	c := etcdtest.Start(t, 1)
	cli := c.Client(t)
	idPath := filepath.Join(t.TempDir(), "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := etcdVault{c: c, opts: etcd.Options{Endpoints: c.Endpoints(), Prefix: "/arca/format1/", Identity: idPath, Timeout: testTimeout}}
	ctx := context.Background()
	if err := etcd.CreateFormat1(ctx, v.opts, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	first, second := v.open(t), v.open(t)
	t0 := time.Now().UTC()
	if err := first.PutLegacy(ctx, vault.Record{Meta: vault.Meta{Name: "app/db", Version: 1, CreatedAt: t0, UpdatedAt: t0}, Value: vault.NewSecret([]byte("v1"))}); err != nil {
		t.Fatal(err)
	}
	if f := headerFormat(t, cli, v.opts.Prefix); f != "arca-etcd-vault/1" {
		t.Fatalf("format %q before any write", f)
	}
	if _, err := second.Get(ctx, "app/db"); err != nil {
		t.Fatal(err)
	}
	mustApply(t, first, put("app/db", "v2"))
	if f := headerFormat(t, cli, v.opts.Prefix); f != "arca-etcd-vault/2" {
		t.Fatalf("format %q after the first write", f)
	}
	if m := mustApply(t, second, put("app/db", "v3")); m.Version != 3 {
		t.Fatalf("a write through a handle that loaded format 1: %+v", m)
	}
	if f := headerFormat(t, cli, newEtcdVault(t, c, "/arca/format2/").opts.Prefix); f != "arca-etcd-vault/2" {
		t.Fatalf("Create makes format %q", f)
	}
}

// An rm of a name whose value fails to authenticate erases it: changes
// reports it erased (what it was cannot be told: version 0), and the
// name starts over.
func TestEtcdRmOfTamperedIsErased(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/rmtampered/")
	e := v.open(t)
	ctx := context.Background()
	mustApply(t, e, put("app/db", "v1"))
	mustApply(t, e, put("app/db", "v2"))
	start, err := e.Changes(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := corruptEtcdRecord(c.Client(t), v.opts.Prefix); err != nil {
		t.Fatal(err)
	}
	m := mustApply(t, e, vault.Write{Kind: vault.Remove, Name: "app/db"})
	if m.Touch == nil || !m.Touch.Gone {
		t.Errorf("rm of a tampered record: %+v, want it gone", m)
	}
	pages, _ := changesOf(t, e, start.Cursor, 0)
	if got := pages[0]; len(got) != 1 || got[0].Name != "app/db" || got[0].State != vault.StateErased || got[0].Version != 0 {
		t.Fatalf("changes after the rm: %+v", pages)
	}
	if _, err := e.Chain(ctx, "app/db"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Chain after the rm: %v", err)
	}
	if m := mustApply(t, e, put("app/db", "again")); m.Version != 1 || !m.Created {
		t.Errorf("put after the rm: %+v", m)
	}
}

// A batch whose names keep more than writeCost foretells goes in more
// units: each under the bound of one transaction, every write landing.
func TestEtcdBatchUnitsCutByHistory(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/batchcut/")
	e := v.open(t)
	ctx := context.Background()
	big := strings.Repeat("v", 30<<10)
	const names = 5
	ws := make([]vault.Write, names)
	for i := range ws {
		name := fmt.Sprintf("app/big%d", i)
		for range vault.DefaultMaxVersions {
			mustApply(t, e, put(name, big)) // about 300 KiB kept per name
		}
		ws[i] = put(name, "small")
	}
	var units []int
	n, err := e.ApplyBatch(ctx, vault.Writes(ws), func(ms []vault.Meta) error {
		units = append(units, len(ms))
		return nil
	})
	if err != nil || n != names {
		t.Fatalf("batch: %d landed, %v", n, err)
	}
	if len(units) < 2 || units[0] >= names {
		t.Fatalf("units %v: the first was not cut", units)
	}
	for _, w := range ws {
		if got, err := e.Get(ctx, w.Name); err != nil || got.Version != vault.DefaultMaxVersions+1 || !got.Value.Equal(w.Value) {
			t.Fatalf("%s after the batch: version %d, %v", w.Name, got.Version, err)
		}
	}
}

// A group's writes follow vault.Step against what its earlier writes
// left: an rm and an undelete of one name, then a put whose if_version is
// stale, which is a conflict dropped alone.
func TestEtcdGroupHistory(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/grouphist/")
	e := v.open(t)
	ctx := context.Background()
	mustApply(t, e, put("app/a", "one"))
	g, err := e.Group(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := uint64(1)
	for i, w := range []vault.Write{{Kind: vault.Remove, Name: "app/a"}, {Kind: vault.Undelete, Name: "app/a"}} {
		if _, err := g.Add(ctx, w, approveAny); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	w := put("app/a", "late")
	w.IfVersion = &stale
	var ce *vault.ConflictError
	if _, err := g.Add(ctx, w, approveAny); !errors.As(err, &ce) || ce.Current != 2 {
		t.Fatalf("a stale if_version in the group: %v", err)
	}
	if err := g.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ch, err := v.open(t).Chain(ctx, "app/a")
	if err != nil || ch.Current.Version != 2 || string(ch.Current.Value.Reveal()) != "one" || len(ch.Previous) != 1 || ch.Deleted() {
		t.Fatalf("after the group: %+v, %v", ch.Versions(), err)
	}
}

// Where there is no vault yet, changes answers a cursor that the vault's
// creation resets.
func TestEtcdChangesBeforeTheVault(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/changesfirst/")
	v.opts.Prefix = "/arca/changesnone/"
	e := v.open(t)
	ctx := context.Background()
	first, err := e.Changes(ctx, "", 0)
	if err != nil || first.Cursor == "" || first.Reset {
		t.Fatalf("Changes with no vault: %+v, %v", first, err)
	}
	if again, err := e.Changes(ctx, first.Cursor, 0); err != nil || again.Reset || len(again.Changes) != 0 {
		t.Fatalf("Changes again with no vault: %+v, %v", again, err)
	}
	mustApply(t, e, put("app/a", "1"))
	if after, err := e.Changes(ctx, first.Cursor, 0); err != nil || !after.Reset {
		t.Fatalf("Changes once the vault is made: %+v, %v", after, err)
	}
}
