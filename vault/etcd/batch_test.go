package etcd

import (
	"bytes"
	"context"
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
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// batchCluster is one etcd member the batch tests share, each under a
// prefix of its own: starting a member per test would double their time.
type batchCluster struct {
	c *etcdtest.Cluster
	n int
}

// vault is an empty vault under a fresh prefix; create false leaves the
// prefix empty, for a first write to create the vault.
func (b *batchCluster) vault(t *testing.T, create bool) faultVault {
	t.Helper()
	b.n++
	v := faultVault{c: b.c, prefix: fmt.Sprintf("/arca/batch-%d/", b.n), id: filepath.Join(t.TempDir(), "id.txt")}
	if _, _, err := identity.Ensure(v.id, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !create {
		return v
	}
	ids, err := identity.Load(v.id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(context.Background(), Options{Endpoints: b.c.Endpoints(), Prefix: v.prefix, Identity: v.id, Timeout: 3 * time.Second}, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	return v
}

// openWith is faultVault.open with an op timeout of its own.
func (v faultVault) openWith(t *testing.T, timeout time.Duration) *Vault {
	e, err := Open(Options{Endpoints: v.c.Endpoints(), Prefix: v.prefix, Identity: v.id, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// putBatch is n puts of records batch/r000… with values v-000….
func putBatch(n int) []vault.Write {
	ws := make([]vault.Write, n)
	for i := range ws {
		ws[i] = vault.Write{Kind: vault.Put, Name: fmt.Sprintf("batch/r%03d", i), Value: vault.NewSecret(fmt.Appendf(nil, "v-%03d", i))}
	}
	return ws
}

// units records what a batch's approve was shown, unit by unit, and runs
// hook (when set) with the unit's number, from 1, and its metadata.
type units struct {
	seen [][]vault.Meta
	hook func(unit int, metas []vault.Meta) error
}

// applyBatch is e.ApplyBatch of ws; it returns what approve was shown of
// the writes that landed, and fails the test when e says more landed than
// approve was shown.
func applyBatch(t testing.TB, e *Vault, ctx context.Context, ws []vault.Write, approve vault.ApproveBatch) ([]vault.Meta, error) {
	t.Helper()
	var shown []vault.Meta
	n, err := e.ApplyBatch(ctx, vault.Writes(ws), func(ms []vault.Meta) error {
		shown = append(shown, ms...)
		return approve(ms)
	})
	if n < 0 || n > len(shown) {
		t.Fatalf("ApplyBatch says %d of %d writes landed; approve was shown %d", n, len(ws), len(shown))
	}
	return shown[:n], err
}

func (u *units) approve(metas []vault.Meta) error {
	u.seen = append(u.seen, slices.Clone(metas))
	if u.hook != nil {
		return u.hook(len(u.seen), metas)
	}
	return nil
}

// sizes is how many writes each unit had.
func (u *units) sizes() []int {
	var out []int
	for _, m := range u.seen {
		out = append(out, len(m))
	}
	return out
}

// wantNames fails unless metas name exactly the records ws write, in order.
func wantNames(t *testing.T, what string, metas []vault.Meta, ws []vault.Write) {
	t.Helper()
	if len(metas) != len(ws) {
		t.Fatalf("%s: %d metas, want %d", what, len(metas), len(ws))
	}
	for i := range ws {
		if metas[i].Name != ws[i].Name {
			t.Fatalf("%s: meta %d is %s, want %s", what, i, metas[i].Name, ws[i].Name)
		}
	}
}

// wantListed fails unless e lists exactly the records ws write.
func wantListed(t *testing.T, e *Vault, ws []vault.Write) {
	t.Helper()
	metas, err := e.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(ws)
	slices.SortFunc(want, func(a, b vault.Write) int { return strings.Compare(a.Name, b.Name) })
	wantNames(t, "list", metas, want)
}

// wantValues fails unless every record ws write holds its value at version.
func wantValues(t *testing.T, e *Vault, ws []vault.Write, version uint64) {
	t.Helper()
	for _, w := range ws {
		got, err := e.Get(context.Background(), w.Name)
		if err != nil || !got.Value.Equal(w.Value) || got.Version != version {
			t.Fatalf("%s: version %d, %v; want its value at version %d", w.Name, got.Version, err, version)
		}
	}
}

func approveAll([]vault.Meta) error { return nil }

// errDenied is the refusal of the tests' approve.
var errDenied = errors.New("denied by the test")

// TestEtcdBatch runs the batch cases on one shared member.
func TestEtcdBatch(t *testing.T) {
	b := &batchCluster{c: etcdtest.Start(t, 1)}
	for _, c := range []struct {
		name string
		run  func(*testing.T, *batchCluster)
	}{
		{"Lands", testBatchLands},
		{"RefusedUnit", testBatchRefusedUnit},
		{"ConcurrentWrite", testBatchConcurrentWrite},
		{"SplitsByBytes", testBatchSplitsByBytes},
		{"Missing", testBatchMissing},
		{"FirstWriteCreates", testBatchFirstWriteCreates},
		{"Empty", testBatchEmpty},
		{"Duplicates", testBatchDuplicates},
		{"Restore", testBatchRestore},
		{"ApplyRestore", testApplyRestore},
		{"RestoreOverCorrupt", testRestoreOverCorrupt},
		{"RekeyBetweenUnits", testBatchRekeyBetweenUnits},
		{"RekeyInApprove", testBatchRekeyInApprove},
		{"LostAnswer", testBatchLostAnswer},
		{"UnknownOutcome", testBatchUnknownOutcome},
		{"RacingApply", testBatchRacingApply},
		{"CancelStops", testBatchCancelStops},
		{"DeadlinePerUnit", testBatchDeadlinePerUnit},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, b) })
	}
}

// 250 puts land in units of 100, 100 and 50, in order, each approved
// before any of it is committed (a second handle, inside approve, sees
// the units before and nothing of the unit), all at version 1.
func testBatchLands(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e1, e2 := v.open(t), v.open(t)
	ws := putBatch(250)
	u := &units{hook: func(unit int, metas []vault.Meta) error {
		wantListed(t, e2, ws[:100*(unit-1)])
		for _, m := range metas {
			if _, err := e2.Get(context.Background(), m.Name); !errors.Is(err, vault.ErrNotFound) {
				t.Errorf("unit %d: %s readable before its commit: %v", unit, m.Name, err)
			}
		}
		return nil
	}}
	metas, err := applyBatch(t, e1, context.Background(), ws, u.approve)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.sizes(); !slices.Equal(got, []int{100, 100, 50}) {
		t.Fatalf("units %v, want [100 100 50]", got)
	}
	wantNames(t, "result", metas, ws)
	wantNames(t, "approved", slices.Concat(u.seen...), ws)
	for i, m := range metas {
		if m.Version != 1 || !m.Created || m.CreatedAt.IsZero() || !m.UpdatedAt.Equal(m.CreatedAt) || !m.RotatedAt.IsZero() {
			t.Fatalf("meta %d: %+v, want a created record at version 1", i, m)
		}
		if m != u.seen[i/100][i%100] {
			t.Fatalf("meta %d: %+v, but approve saw %+v", i, m, u.seen[i/100][i%100])
		}
	}
	wantListed(t, e2, ws)
	wantValues(t, e2, ws, 1)
}

// A unit approve refuses is not committed, nor any after it; the units
// before it stay.
func testBatchRefusedUnit(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	ws := putBatch(250)
	u := &units{hook: func(unit int, _ []vault.Meta) error {
		if unit == 2 {
			return errDenied
		}
		return nil
	}}
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if !errors.Is(err, errDenied) {
		t.Fatalf("refused unit 2: %v, want the refusal", err)
	}
	if len(u.seen) != 2 {
		t.Fatalf("approve called %d times, want 2", len(u.seen))
	}
	wantNames(t, "result", metas, ws[:100])
	wantListed(t, v.open(t), ws[:100])
}

// A write through another handle while unit 2 is being approved, to a
// record of unit 2 that exists and to one that does not, makes unit 2
// fail with the conflict: unit 1 stays, unit 2 lands nothing, and the
// other handle's writes stand.
func testBatchConcurrentWrite(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e1, e2 := v.open(t), v.open(t)
	ws := putBatch(250)
	if _, err := putValue(e1, ws[150].Name, "before", nil); err != nil {
		t.Fatal(err)
	}
	u := &units{hook: func(unit int, _ []vault.Meta) error {
		if unit != 2 {
			return nil
		}
		if m, err := putValue(e2, ws[150].Name, "theirs", nil); err != nil || m.Version != 2 {
			t.Errorf("the other handle's put of an existing record: %+v, %v", m, err)
		}
		if m, err := putValue(e2, ws[160].Name, "theirs too", nil); err != nil || m.Version != 1 {
			t.Errorf("the other handle's put of a new record: %+v, %v", m, err)
		}
		return nil
	}}
	metas, err := applyBatch(t, e1, context.Background(), ws, u.approve)
	if !errors.Is(err, errConflict) || !strings.Contains(err.Error(), "writes 101 to 200") {
		t.Fatalf("unit 2 after a concurrent write: %v, want the conflict for writes 101 to 200", err)
	}
	wantNames(t, "result", metas, ws[:100])
	wantRecord(t, e1, ws[150].Name, "theirs", 2)
	wantRecord(t, e1, ws[160].Name, "theirs too", 1)
	wantListed(t, e1, append(slices.Clone(ws[:100]), ws[150], ws[160]))
}

// Large values split a batch by bytes well before 100 writes.
func testBatchSplitsByBytes(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	ws := make([]vault.Write, 40)
	for i := range ws {
		ws[i] = vault.Write{Kind: vault.Put, Name: fmt.Sprintf("big/r%02d", i), Value: vault.NewSecret(bytes.Repeat([]byte{byte('a' + i%26)}, 60<<10))}
	}
	u := &units{}
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.seen) < 2 {
		t.Fatalf("40 values of 60 KiB went in %d unit", len(u.seen))
	}
	at := 0
	for _, n := range u.sizes() {
		size := 0
		for _, w := range ws[at : at+n] {
			size += e.writeCost(w)
		}
		if size > maxUnitBytes {
			t.Errorf("a unit of %d writes is %d bytes, over %d", n, size, maxUnitBytes)
		}
		at += n
	}
	wantNames(t, "result", metas, ws)
	wantValues(t, v.open(t), ws, 1)
}

// A rotate or remove of a missing record fails its unit before approve:
// nothing of the unit lands, the units before it do.
func testBatchMissing(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	for _, k := range []vault.Kind{vault.Rotate, vault.Remove} {
		ws := putBatch(3)
		ws[1] = vault.Write{Kind: k, Name: "batch/missing", Value: vault.NewSecret([]byte("x"))}
		u := &units{}
		metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
		if !errors.Is(err, vault.ErrNotFound) || len(metas) != 0 || len(u.seen) != 0 {
			t.Fatalf("kind %d of a missing record: %d landed, approve called %d times, %v", k, len(metas), len(u.seen), err)
		}
		if strings.Contains(err.Error(), "batch/") {
			t.Errorf("the error names a record: %v", err)
		}
		wantListed(t, e, nil)
	}
	ws := putBatch(150)
	ws[120] = vault.Write{Kind: vault.Remove, Name: "batch/missing"}
	u := &units{}
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if !errors.Is(err, vault.ErrNotFound) || !strings.Contains(err.Error(), "write 121 of the batch") {
		t.Fatalf("a remove of a missing record as write 121: %v", err)
	}
	if len(u.seen) != 1 {
		t.Fatalf("approve called %d times, want once (unit 1)", len(u.seen))
	}
	wantNames(t, "result", metas, ws[:100])
	wantListed(t, e, ws[:100])
}

// On a prefix that holds no vault, a batch that starts with a rotate or a
// remove is vault.ErrNotFound and creates nothing; one that starts with a
// put creates the vault.
func testBatchFirstWriteCreates(t *testing.T, b *batchCluster) {
	v := b.vault(t, false)
	e := v.open(t)
	raw := b.c.Client(t)
	for _, k := range []vault.Kind{vault.Rotate, vault.Remove} {
		ws := []vault.Write{{Kind: k, Name: "app/a", Value: vault.NewSecret([]byte("x"))}, {Kind: vault.Put, Name: "app/b", Value: vault.NewSecret([]byte("y"))}}
		u := &units{}
		if _, err := applyBatch(t, e, context.Background(), ws, u.approve); !errors.Is(err, vault.ErrNotFound) || len(u.seen) != 0 {
			t.Fatalf("kind %d first, no vault: approve called %d times, %v", k, len(u.seen), err)
		}
		if resp, err := raw.Get(context.Background(), v.prefix, clientv3.WithPrefix()); err != nil || len(resp.Kvs) != 0 {
			t.Fatalf("a refused batch left %d keys, %v", len(resp.Kvs), err)
		}
	}
	ws := putBatch(3)
	metas, err := applyBatch(t, e, context.Background(), ws, approveAll)
	if err != nil {
		t.Fatal(err)
	}
	wantNames(t, "result", metas, ws)
	wantValues(t, v.open(t), ws, 1)
}

// An empty batch does nothing, not even create the vault, and approves
// nothing.
func testBatchEmpty(t *testing.T, b *batchCluster) {
	v := b.vault(t, false)
	e := v.open(t)
	for _, ws := range [][]vault.Write{nil, {}} {
		u := &units{}
		metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
		if err != nil || len(metas) != 0 || len(u.seen) != 0 {
			t.Fatalf("empty batch: %v, approve called %d times, %v", metas, len(u.seen), err)
		}
	}
	if resp, err := b.c.Client(t).Get(context.Background(), v.prefix, clientv3.WithPrefix()); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("an empty batch left %d keys, %v", len(resp.Kvs), err)
	}
}

// A batch naming a record twice is refused before approve, by position.
func testBatchDuplicates(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	ws := putBatch(3)
	ws[0].Name, ws[2].Name = "dupns/DUP-NAME", "dupns/DUP-NAME"
	u := &units{}
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if err == nil || !strings.Contains(err.Error(), "writes 1 and 3") || len(metas) != 0 || len(u.seen) != 0 {
		t.Fatalf("duplicates: %d landed, approve called %d times, %v", len(metas), len(u.seen), err)
	}
	if strings.Contains(err.Error(), "DUP-NAME") || strings.Contains(err.Error(), "dupns") {
		t.Errorf("the error names the record: %v", err)
	}
	wantListed(t, e, nil)
}

// restoreMeta is a backup's metadata: times in a zone east of UTC, down
// to the nanosecond.
func restoreMeta(version uint64, rotated bool) vault.Meta {
	zone := time.FixedZone("UTC+05:30", 5*3600+30*60)
	m := vault.Meta{Version: version,
		CreatedAt: time.Date(2024, 1, 2, 3, 4, 5, 123456789, zone),
		UpdatedAt: time.Date(2024, 6, 7, 8, 9, 10, 987654321, zone)}
	if rotated {
		m.RotatedAt = time.Date(2024, 5, 6, 7, 8, 9, 1, zone)
	}
	return m
}

// wantMeta fails unless got is want with name, created as given, and
// every time in UTC at the same instant.
func wantMeta(t *testing.T, what string, got, want vault.Meta, name string, created bool) {
	t.Helper()
	want.Name, want.Created = name, created
	want.CreatedAt, want.UpdatedAt = want.CreatedAt.UTC(), want.UpdatedAt.UTC()
	if !want.RotatedAt.IsZero() {
		want.RotatedAt = want.RotatedAt.UTC()
	}
	for _, tm := range []time.Time{got.CreatedAt, got.UpdatedAt, got.RotatedAt} {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("%s: a time in %v, want UTC", what, tm.Location())
		}
	}
	if got != want {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

// A restore keeps the backup's version and times exactly, over a record
// and where there is none; rotate and remove go beside it.
func testBatchRestore(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	for _, n := range []string{"app/old", "app/rot", "app/gone"} {
		if _, err := putValue(e, n, "v1", nil); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := e.Get(context.Background(), "app/gone")
	if err != nil {
		t.Fatal(err)
	}
	ws := []vault.Write{
		{Kind: vault.Restore, Name: "app/old", Value: vault.NewSecret([]byte("restored")), Meta: restoreMeta(7, true)},
		{Kind: vault.Restore, Name: "app/new", Value: vault.NewSecret([]byte("new")), Meta: restoreMeta(3, false)},
		{Kind: vault.Rotate, Name: "app/rot", Value: vault.NewSecret([]byte("v2"))},
		{Kind: vault.Remove, Name: "app/gone"},
	}
	metas, err := applyBatch(t, e, context.Background(), ws, approveAll)
	if err != nil {
		t.Fatal(err)
	}
	wantMeta(t, "restore over a record", metas[0], restoreMeta(7, true), "app/old", false)
	wantMeta(t, "restore of a new record", metas[1], restoreMeta(3, false), "app/new", true)
	removed := metas[3]
	if removed.Touch == nil || removed.Touch.DeletedAt.IsZero() {
		t.Errorf("remove %+v: not a soft delete", removed)
	}
	removed.Touch = nil
	if metas[2].Version != 2 || metas[2].RotatedAt.IsZero() || removed != gone.Meta {
		t.Errorf("rotate %+v, remove %+v (the record had %+v)", metas[2], metas[3], gone.Meta)
	}
	fresh := v.open(t)
	for _, w := range ws[:2] {
		got, err := fresh.Get(context.Background(), w.Name)
		if err != nil || !got.Value.Equal(w.Value) {
			t.Fatalf("%s after the restore: %v", w.Name, err)
		}
		wantMeta(t, w.Name+" read back", got.Meta, w.Meta, w.Name, false)
	}
	wantRecord(t, fresh, "app/rot", "v2", 2)
	if _, err := fresh.Get(context.Background(), "app/gone"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("removed record: %v", err)
	}
}

// Apply takes a restore too, and a restore as the first write creates
// the vault, as a put does.
func testApplyRestore(t *testing.T, b *batchCluster) {
	v := b.vault(t, false)
	e := v.open(t)
	w := vault.Write{Kind: vault.Restore, Name: "app/db", Value: vault.NewSecret([]byte("backup")), Meta: restoreMeta(9, true)}
	m, err := e.Apply(context.Background(), w, func(vault.Meta) error { return nil })
	if err != nil {
		t.Fatalf("restore as the first write: %v", err)
	}
	wantMeta(t, "restore", m, w.Meta, "app/db", true)
	got, err := v.open(t).Get(context.Background(), "app/db")
	if err != nil || string(got.Value.Reveal()) != "backup" {
		t.Fatalf("restored record: %v", err)
	}
	wantMeta(t, "restored record read back", got.Meta, w.Meta, "app/db", false)
}

// A restore over a record that fails to authenticate fails as a put does,
// through Apply and in a batch, approving nothing.
func testRestoreOverCorrupt(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	if _, err := putValue(e, "app/db", "one", nil); err != nil {
		t.Fatal(err)
	}
	if err := flipRecord(b.c.Client(t), v.prefix); err != nil {
		t.Fatal(err)
	}
	approved := 0
	one := func(vault.Meta) error { approved++; return nil }
	restore := vault.Write{Kind: vault.Restore, Name: "app/db", Value: vault.NewSecret([]byte("backup")), Meta: restoreMeta(4, false)}
	for _, w := range []vault.Write{{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret([]byte("two"))}, restore} {
		if _, err := e.Apply(context.Background(), w, one); !errors.Is(err, seal.ErrAuth) {
			t.Errorf("Apply kind %d over a corrupt record: %v, want it to fail to authenticate", w.Kind, err)
		}
	}
	u := &units{}
	if _, err := applyBatch(t, e, context.Background(), []vault.Write{restore}, u.approve); !errors.Is(err, seal.ErrAuth) {
		t.Errorf("a batch restore over a corrupt record: %v, want it to fail to authenticate", err)
	}
	if approved != 0 || len(u.seen) != 0 {
		t.Errorf("approve called %d and %d times, want never", approved, len(u.seen))
	}
}

// flipRecord flips a ciphertext byte of the one record under prefix.
func flipRecord(cli *clientv3.Client, prefix string) error {
	ctx := context.Background()
	resp, err := cli.Get(ctx, prefix+"r/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 {
		return fmt.Errorf("records under %s: %v", prefix, err)
	}
	kv := resp.Kvs[0]
	kv.Value[len(kv.Value)/2] ^= 0x01
	_, err = cli.Put(ctx, string(kv.Key), string(kv.Value))
	return err
}

// commitsFrom matches the commits (transactions that touch the written
// marker) from the nth on, counting every attempt.
func commitsFrom(n int) func([]clientv3.Op) bool {
	seen := 0
	written := puts("written")
	return func(then []clientv3.Op) bool {
		if !written(then) {
			return false
		}
		seen++
		return seen >= n
	}
}

// putsBefore puts n records app/pre-… through e.
func putsBefore(t *testing.T, e *Vault, n int) []vault.Write {
	t.Helper()
	var ws []vault.Write
	for i := range n {
		w := vault.Write{Kind: vault.Put, Name: fmt.Sprintf("app/pre-%d", i), Value: vault.NewSecret(fmt.Appendf(nil, "pre-%d", i))}
		if _, err := e.Apply(context.Background(), w, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return ws
}

// A rekey through another handle that lands between two units (after
// unit 1's commit) is adopted: the next units land under the new key and
// no record is lost.
func testBatchRekeyBetweenUnits(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e1, e2 := v.open(t), v.open(t)
	pre := putsBefore(t, e1, 5)
	oldID := e1.hdr.VaultID
	e1.cli.KV = &lossyKV{KV: e1.cli.KV, match: commitsFrom(1), answer: true, hook: func() {
		if n, err := e2.Rekey(context.Background()); err != nil || n != 105 {
			t.Errorf("rekey between units: %d records, %v", n, err)
		}
	}}
	ws := putBatch(250)
	metas, err := applyBatch(t, e1, context.Background(), ws, approveAll)
	if err != nil {
		t.Fatalf("a batch across a rekey: %v", err)
	}
	wantNames(t, "result", metas, ws)
	if e1.hdr.VaultID == oldID {
		t.Error("the batch did not adopt the rekeyed header")
	}
	all := append(slices.Clone(pre), ws...)
	fresh := v.open(t)
	wantListed(t, fresh, all)
	wantValues(t, fresh, all, 1)
}

// A rekey through another handle while unit 1 is being approved makes
// unit 1 fail with the conflict, nothing lost; the batch run again lands.
func testBatchRekeyInApprove(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e1, e2 := v.open(t), v.open(t)
	pre := putsBefore(t, e1, 5)
	ws := putBatch(150)
	u := &units{hook: func(unit int, _ []vault.Meta) error {
		if unit == 1 {
			if _, err := e2.Rekey(context.Background()); err != nil {
				t.Errorf("rekey inside approve: %v", err)
			}
		}
		return nil
	}}
	metas, err := applyBatch(t, e1, context.Background(), ws, u.approve)
	if !errors.Is(err, errConflict) || len(metas) != 0 {
		t.Fatalf("unit 1 after a rekey in its approve: %d landed, %v; want the conflict", len(metas), err)
	}
	wantListed(t, e2, pre)
	wantValues(t, e2, pre, 1)
	if metas, err = applyBatch(t, e1, context.Background(), ws, approveAll); err != nil || len(metas) != len(ws) {
		t.Fatalf("the batch run again: %d landed, %v", len(metas), err)
	}
	all := append(slices.Clone(pre), ws...)
	wantListed(t, e2, all)
	wantValues(t, e2, all, 1)
}

// A unit whose commit landed but whose answer was lost is found landed by
// its token when the retry's compare fails, and the batch goes on.
func testBatchLostAnswer(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: commitsFrom(2)}
	ws := putBatch(250)
	metas, err := applyBatch(t, e, context.Background(), ws, approveAll)
	if err != nil {
		t.Fatalf("a batch whose unit 2 lost its answer once: %v", err)
	}
	wantNames(t, "result", metas, ws)
	fresh := v.open(t)
	wantListed(t, fresh, ws)
	wantValues(t, fresh, ws, 1)
}

// noTokenKV fails every read of a commit token, as if the cluster had
// gone away after the commit.
type noTokenKV struct{ clientv3.KV }

func (k noTokenKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if strings.Contains(key, "/token/") {
		return nil, context.DeadlineExceeded
	}
	return k.KV.Get(ctx, key, opts...)
}

// A unit whose every commit answer is lost and whose token cannot be read
// is vault.ErrUnknownOutcome; the batch stops there, with unit 1 reported
// landed. (The unit did land here: the fault loses only answers.)
func testBatchUnknownOutcome(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.openWith(t, time.Second)
	e.cli.KV = noTokenKV{&lossyKV{KV: e.cli.KV, match: commitsFrom(2), always: true}}
	ws := putBatch(250)
	u := &units{}
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if !errors.Is(err, vault.ErrUnknownOutcome) || !strings.Contains(err.Error(), "writes 101 to 200") {
		t.Fatalf("unit 2 without any answer: %v, want the unknown outcome of writes 101 to 200", err)
	}
	if len(u.seen) != 2 {
		t.Errorf("approve called %d times, want 2: the batch stops at the unknown unit", len(u.seen))
	}
	wantNames(t, "result", metas, ws[:100])
	wantListed(t, v.open(t), ws[:200])
}

// Batches and single writes through other handles race on the same
// records. Each may lose a race (the conflict), but no acknowledged write
// is lost: per record, the acknowledged versions are 1 to its final
// version, each once.
func testBatchRacingApply(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	eb, ea := v.open(t), v.open(t)
	const records, rounds = 10, 15
	var mu sync.Mutex
	acked := map[string][]uint64{}
	ack := func(m vault.Meta) {
		mu.Lock()
		defer mu.Unlock()
		acked[m.Name] = append(acked[m.Name], m.Version)
	}
	ws := putBatch(records)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range rounds {
			metas, err := applyBatch(t, eb, context.Background(), ws, approveAll)
			if err != nil && !errors.Is(err, errConflict) {
				t.Errorf("batch: %v", err)
			}
			for _, m := range metas {
				ack(m)
			}
		}
	})
	wg.Go(func() {
		for i := range 3 * rounds {
			m, err := ea.Apply(context.Background(), ws[i%records], func(vault.Meta) error { return nil })
			if err != nil && !errors.Is(err, errConflict) {
				t.Errorf("apply: %v", err)
			}
			if err == nil {
				ack(m)
			}
		}
	})
	wg.Wait()
	fresh := v.open(t)
	for _, w := range ws {
		vs := acked[w.Name]
		slices.Sort(vs)
		got, err := fresh.Get(context.Background(), w.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i, ver := range vs {
			if ver != uint64(i+1) || got.Version != uint64(len(vs)) {
				t.Fatalf("%s: acknowledged versions %v, final version %d: a write was lost", w.Name, vs, got.Version)
			}
		}
	}
}

// A ctx cancelled while unit 1 commits stops the batch before unit 2: unit
// 1 landed, nothing after it did, and the error says how far it got.
func testBatchCancelStops(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.cli.KV = &lossyKV{KV: e.cli.KV, match: commitsFrom(1), answer: true, hook: cancel}
	ws := putBatch(250)
	u := &units{}
	metas, err := applyBatch(t, e, ctx, ws, u.approve)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 100 of its 250 writes") {
		t.Fatalf("a batch cancelled after unit 1: %v", err)
	}
	if len(u.seen) != 1 {
		t.Errorf("approve called %d times, want once", len(u.seen))
	}
	wantNames(t, "result", metas, ws[:100])
	wantListed(t, v.open(t), ws[:100])
}

// Each unit has the op's timeout to itself: a batch whose units together
// take longer than one timeout (approve is slow) lands whole. The sleep in
// approve is the slowness under test, not an ordering: 3 units of it pass
// one timeout, and each leaves more than half the timeout for its commit.
func testBatchDeadlinePerUnit(t *testing.T, b *batchCluster) {
	v := b.vault(t, true)
	e := v.openWith(t, 2*time.Second)
	ws := putBatch(250)
	u := &units{hook: func(int, []vault.Meta) error {
		time.Sleep(700 * time.Millisecond)
		return nil
	}}
	start := time.Now()
	metas, err := applyBatch(t, e, context.Background(), ws, u.approve)
	if err != nil {
		t.Fatalf("a batch of 3 units, each approved in 700 ms, with a timeout of 2 s: %v", err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("the batch took %v, under one timeout: it proves nothing", took)
	}
	wantNames(t, "result", metas, ws)
}
