package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// BenchmarkEtcdPutHistory puts, in one loop on one cluster (1 member, then
// 3), into a name holding 10 versions (the default max_versions, so each
// put erases the oldest) and into a name holding a record written before
// history (one version, the sealed record alone: what today's vaults
// hold), put back in that form, untimed, before each put. Each timed put
// is made while the handle holds the name's lock (a session's next write
// of it: a read and the commit), as the put before it, untimed, left it.
// Reported: each one's mean and their ratio.
func BenchmarkEtcdPutHistory(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			c := etcdtest.Start(b, members)
			e := newEtcdVault(b, c, "/arca/histbench/").open(b)
			benchPutHistory(b, e)
		})
	}
}

func benchPutHistory(b *testing.B, e *etcd.Vault) {
	ctx := context.Background()
	value := "s3cret-value-of-some-length-0123456789"
	for range vault.DefaultMaxVersions {
		mustApply(b, e, put("bench/ten", value))
	}
	var ten, legacy time.Duration
	for b.Loop() {
		mustApply(b, e, put("bench/ten", value))
		t0 := time.Now()
		mustApply(b, e, put("bench/ten", value))
		ten += time.Since(t0)

		mustApply(b, e, put("bench/legacy", value))
		now := time.Now().UTC()
		r := vault.Record{Meta: vault.Meta{Name: "bench/legacy", Version: 1, CreatedAt: now, UpdatedAt: now}, Value: vault.NewSecret([]byte(value))}
		if err := e.PutLegacy(ctx, r); err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		mustApply(b, e, put("bench/legacy", value))
		legacy += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ten.Nanoseconds())/n, "put10-ns")
	b.ReportMetric(float64(legacy.Nanoseconds())/n, "put-legacy-ns")
	b.ReportMetric(float64(ten)/float64(legacy), "put10/put-legacy")
}

// BenchmarkEtcdGetHistory gets, in one loop on one 1-member cluster, the
// current version of a name holding 10 versions and of a record written
// before history (the sealed record alone), and reports their ratio: a
// get opens only the current part, but the key's whole value crosses the
// wire.
func BenchmarkEtcdGetHistory(b *testing.B) {
	c := etcdtest.Start(b, 1)
	e := newEtcdVault(b, c, "/arca/gethistbench/").open(b)
	ctx := context.Background()
	value := "s3cret-value-of-some-length-0123456789"
	for range vault.DefaultMaxVersions {
		mustApply(b, e, put("bench/ten", value))
	}
	now := time.Now().UTC()
	r := vault.Record{Meta: vault.Meta{Name: "bench/legacy", Version: 1, CreatedAt: now, UpdatedAt: now}, Value: vault.NewSecret([]byte(value))}
	if err := e.PutLegacy(ctx, r); err != nil {
		b.Fatal(err)
	}
	var ten, legacy time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Get(ctx, "bench/ten"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := e.Get(ctx, "bench/legacy"); err != nil {
			b.Fatal(err)
		}
		ten, legacy = ten+t1.Sub(t0), legacy+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ten.Nanoseconds())/n, "get10-ns")
	b.ReportMetric(float64(legacy.Nanoseconds())/n, "get-legacy-ns")
	b.ReportMetric(float64(ten)/float64(legacy), "get10/get-legacy")
}

// BenchmarkEtcdChangesVsGet measures, in one loop on a 1-member cluster
// whose vault holds 10,000 names (each with 2 versions), a get of one
// name's current version, a history read of it (Chain), and a changes
// poll with nothing changed since its cursor. Reported: each one's mean
// and the ratios to the get.
func BenchmarkEtcdChangesVsGet(b *testing.B) {
	c := etcdtest.Start(b, 1)
	e := newEtcdVault(b, c, "/arca/changesbench/").open(b)
	ctx := context.Background()
	const names = 10000
	ws := make([]vault.Write, names)
	for round := range 2 {
		for i := range ws {
			ws[i] = put(fmt.Sprintf("bench/n%05d", i), fmt.Sprintf("value-%d-%d", i, round))
		}
		if n, err := e.ApplyBatch(ctx, vault.Writes(ws), func([]vault.Meta) error { return nil }); err != nil || n != names {
			b.Fatalf("batch: %d, %v", n, err)
		}
	}
	start, err := e.Changes(ctx, "", 0)
	if err != nil {
		b.Fatal(err)
	}
	var get, hist, poll time.Duration
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("bench/n%05d", i%names)
		i++
		t0 := time.Now()
		if _, err := e.Get(ctx, name); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := e.Chain(ctx, name); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		ch, err := e.Changes(ctx, start.Cursor, 0)
		if err != nil || len(ch.Changes) != 0 || ch.Reset {
			b.Fatalf("changes: %+v, %v", ch, err)
		}
		t3 := time.Now()
		get, hist, poll = get+t1.Sub(t0), hist+t2.Sub(t1), poll+t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(get.Nanoseconds())/n, "get-ns")
	b.ReportMetric(float64(hist.Nanoseconds())/n, "history-ns")
	b.ReportMetric(float64(poll.Nanoseconds())/n, "changes-ns")
	b.ReportMetric(float64(hist)/float64(get), "history/get")
	b.ReportMetric(float64(poll)/float64(get), "changes/get")
}
