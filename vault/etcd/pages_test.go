package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// bigValue is record i's value: 64 KiB, the largest a value may be.
func bigValue(i int) string {
	head := fmt.Sprintf("value %05d ", i)
	return head + strings.Repeat("x", 64<<10-len(head))
}

// fillSealed puts n records named big/<i> holding bigValue(i), sealed with
// e's key, straight into the cluster: many to a transaction, several
// transactions at once, as no client of arca could. What the test then
// does with them goes through the package's own code.
func fillSealed(t *testing.T, e *Vault, raw *clientv3.Client, n int) {
	t.Helper()
	const perTxn = 16 // 16 sealed 64 KiB values stay under etcd's 1.5 MiB request limit
	now := time.Now().UTC()
	sem := make(chan struct{}, 4) // transactions in flight
	errs := make(chan error, n/perTxn+1)
	var wg sync.WaitGroup
	for start := 0; start < n; start += perTxn {
		var ops []clientv3.Op
		for i := start; i < min(n, start+perTxn); i++ {
			name := fmt.Sprintf("big/%05d", i)
			r := vault.Record{Meta: vault.Meta{Name: name, Version: 1, CreatedAt: now, UpdatedAt: now}, Value: vault.NewSecret([]byte(bigValue(i)))}
			slot := e.k.Slot(name)
			sealed, err := e.k.Seal(slot, r)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, clientv3.OpPut(e.recordKey(slot), string(sealed)))
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := raw.Txn(context.Background()).Then(ops...).Commit()
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// countUnder is how many keys the cluster holds under prefix.
func countUnder(t *testing.T, raw *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := raw.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// A vault holding more records than one answer can carry (over 100 MiB of
// 64 KiB values, where an answer is at most 64 MiB) lists, checks and
// rekeys: the reads go in pages at one revision, the rekey's writes in
// batches, and its switch still deletes every old record in one
// transaction.
func TestEtcdBulkOpsPastOneAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("writes over 100 MiB to etcd")
	}
	v := newFaultVault(t, "/arca/big/")
	// Each page of these ops has the op's timeout to itself; 1.5 MiB pages
	// written and fsynced while the rest of the suite runs can take longer
	// than the 3 s the fault tests give a point op.
	e := v.openTimeout(t, 15*time.Second)
	raw := v.c.Client(t)
	if _, err := putValue(e, "app/first", "one", nil); err != nil {
		t.Fatal(err)
	}
	const n = 1700 // 1,700 sealed records of 64 KiB: 109 MiB
	fillSealed(t, e, raw, n)
	ctx := context.Background()
	wantAll := func(when string) {
		t.Helper()
		metas, err := e.List(ctx)
		if err != nil || len(metas) != n+1 {
			t.Fatalf("list %s: %d records, %v; want %d", when, len(metas), err, n+1)
		}
		if metas[0].Name != "app/first" || metas[n].Name != fmt.Sprintf("big/%05d", n-1) {
			t.Fatalf("list %s: first %s, last %s", when, metas[0].Name, metas[n].Name)
		}
		rep, err := e.Check(ctx)
		if err != nil || rep.Records != n+1 || len(rep.Problems) != 0 {
			t.Fatalf("check %s: %d records, problems %q, %v", when, rep.Records, rep.Problems, err)
		}
	}
	wantAll("before the rekey")
	oldRecords := e.recordsKey()
	if got, err := e.Rekey(ctx); err != nil || got != n+1 {
		t.Fatalf("rekey: %d records, %v; want %d", got, err, n+1)
	}
	wantAll("after the rekey")
	if left := countUnder(t, raw, oldRecords); left != 0 {
		t.Errorf("%d records left under the old vault id", left)
	}
	if all := countUnder(t, raw, v.prefix+"r/"); all != n+1 {
		t.Errorf("%d records under r/, want %d", all, n+1)
	}
	r, err := v.openTimeout(t, 15*time.Second).Get(ctx, "big/01234")
	if err != nil || string(r.Value.Reveal()) != bigValue(1234) || r.Version != 1 {
		t.Fatalf("a record after the rekey: version %d, %v", r.Version, err)
	}
}

// compactingKV compacts the cluster (at a revision made for the purpose)
// before the first read at a past revision, once: what auto-compaction may
// do while a bulk read is between its pages.
type compactingKV struct {
	clientv3.KV
	raw   *clientv3.Client
	once  sync.Once
	fired bool
}

func (k *compactingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if clientv3.OpGet(key, opts...).Rev() > 0 {
		k.once.Do(func() {
			k.fired = true
			resp, err := k.raw.Put(ctx, "/elsewhere", "x")
			if err == nil {
				_, err = k.raw.Compact(ctx, resp.Header.Revision)
			}
			if err != nil {
				panic(err)
			}
		})
	}
	return k.KV.Get(ctx, key, opts...)
}

// A bulk read whose revision is compacted away between its pages starts
// again from a new one: list, check and a rekey all come through whole. A
// write that lands while a rekey is between its pages fails that pass, and
// the next pass re-seals the record as written.
func TestEtcdBulkReadsAcrossPages(t *testing.T) {
	v := newFaultVault(t, "/arca/compact/")
	e := v.open(t)
	raw := v.c.Client(t)
	if _, err := putValue(e, "app/first", "one", nil); err != nil {
		t.Fatal(err)
	}
	const n = 300 // more than the first page (maxPageRecords) holds
	fillSealed(t, e, raw, n)
	ctx := context.Background()
	for _, op := range []struct {
		name string
		run  func() (int, error)
	}{
		{"list", func() (int, error) { ms, err := e.List(ctx); return len(ms), err }},
		{"check", func() (int, error) {
			rep, err := e.Check(ctx)
			if err == nil && len(rep.Problems) > 0 {
				err = errors.New(strings.Join(rep.Problems, "; "))
			}
			return rep.Records, err
		}},
		{"rekey", func() (int, error) { return e.Rekey(ctx) }},
	} {
		kv := &compactingKV{KV: e.cli.KV, raw: raw}
		e.cli.KV = kv
		got, err := op.run()
		e.cli.KV = kv.KV
		if !kv.fired {
			t.Fatalf("%s read no page at a past revision", op.name)
		}
		if err != nil || got != n+1 {
			t.Errorf("%s with a compaction between its pages: %d records, %v; want %d", op.name, got, err, n+1)
		}
	}
	e2 := v.open(t)
	last := fmt.Sprintf("big/%05d", n-1)
	kv := &lossyKV{KV: e.cli.KV, match: puts(""), answer: true, hook: func() {
		if _, err := putValue(e2, last, "during", nil); err != nil {
			t.Error(err)
		}
	}}
	e.cli.KV = kv // the hook runs after the first batch of re-sealed records
	got, err := e.Rekey(ctx)
	e.cli.KV = kv.KV
	if err != nil || got != n+1 {
		t.Fatalf("rekey with a write between its pages: %d, %v", got, err)
	}
	wantRecord(t, e2, last, "during", 2)
	wantRecord(t, e2, "big/00000", bigValue(0), 1)
	// A record that fails to authenticate, on the last page, stops a rekey
	// that has written batches by then: they are deleted again.
	wantRecord(t, e, last, "during", 2) // loads the header the rekey made
	lastKey, err := raw.Get(ctx, e.recordsKey(), clientv3.WithLastKey()...)
	if err != nil || len(lastKey.Kvs) != 1 {
		t.Fatalf("the last record's key: %v", err)
	}
	if _, err := raw.Put(ctx, string(lastKey.Kvs[0].Key), "garbage"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Rekey(ctx); err == nil || !strings.Contains(err.Error(), "rm the record or restore it") {
		t.Fatalf("rekey with a bad record: %v", err)
	}
	if all := countUnder(t, raw, v.prefix+"r/"); all != n+1 {
		t.Errorf("after a failed rekey: %d records under r/, want the %d of the vault", all, n+1)
	}
}

// A page is taken only when its keys are the vault's records in strictly
// increasing order from where the page should start: a cluster that
// answers otherwise cannot make a read go round in circles.
func TestEtcdPagesMustAdvance(t *testing.T) {
	e := &Vault{prefix: "/p/", eps: "test"}
	e.hdr.VaultID = "00"
	rec := func(slot string) *mvccpb.KeyValue {
		return &mvccpb.KeyValue{Key: []byte(e.recordKey(slot)), Value: []byte("v")}
	}
	for _, tc := range []struct {
		name string
		from string
		kvs  []*mvccpb.KeyValue
		more bool
		ok   bool
	}{
		{"in order", e.recordKey("a"), []*mvccpb.KeyValue{rec("a"), rec("b")}, true, true},
		{"the last page", e.recordKey("c"), []*mvccpb.KeyValue{rec("c")}, false, true},
		{"before where it should start", e.recordKey("b"), []*mvccpb.KeyValue{rec("a"), rec("c")}, true, false},
		{"out of order", e.recordKey("a"), []*mvccpb.KeyValue{rec("b"), rec("a")}, true, false},
		{"a key twice", e.recordKey("a"), []*mvccpb.KeyValue{rec("a"), rec("a")}, true, false},
		{"a key of another vault", e.recordKey("a"), []*mvccpb.KeyValue{rec("a"), {Key: []byte("/p/r/01/x")}}, true, false},
		{"empty with more to come", e.recordKey("a"), nil, true, false},
	} {
		s := &snapshot{}
		err := e.advance(s, tc.from, tc.kvs, tc.more)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err == nil && tc.more && s.next != string(tc.kvs[len(tc.kvs)-1].Key)+"\x00" {
			t.Errorf("%s: the next page starts at %q", tc.name, s.next)
		}
	}
	s := &snapshot{read: maxEtcdVault}
	if err := e.advance(s, e.recordKey("a"), []*mvccpb.KeyValue{rec("a")}, false); err == nil {
		t.Error("a read past maxEtcdVault was taken")
	}
}

// A check names at most maxProblems records and counts the rest.
func TestCheckProblemsAreBounded(t *testing.T) {
	var p problems
	for i := range maxProblems + 5 {
		p.add(fmt.Sprintf("record %d", i))
	}
	lines := p.lines()
	if len(lines) != maxProblems+1 || lines[maxProblems-1] != fmt.Sprintf("record %d", maxProblems-1) || lines[maxProblems] != "and 5 more records with problems" {
		t.Errorf("%d lines, the last %q", len(lines), lines[len(lines)-1])
	}
}
