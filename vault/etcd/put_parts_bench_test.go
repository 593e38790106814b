package etcd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// BenchmarkEtcdPutParts takes a put made while the handle holds the writer
// lock apart: on one 3-member cluster, in one loop, the vault's put and,
// with the cluster's own client, each round trip such a put is made of,
// shaped as the vault sends it (keys outside the vault's prefix):
//   - the read under the lock: a read-only transaction that holds while
//     the lock key and the header are as known (linearizable, as the
//     vault makes it), and the same made serializable (answered by the
//     member alone, which may lag);
//   - the commit: a transaction comparing the header and the record,
//     putting the record, the written marker and a token bound to a lease,
//     and counting the lock's keys;
//   - a bare Put, a linearizable Get and a serializable Get.
//
// Each is reported as a ratio to the bare Put: what a put cannot go below
// while it reads what it replaces.
func BenchmarkEtcdPutParts(b *testing.B) {
	c := etcdtest.Start(b, 3)
	cli := c.Client(b)
	st := newEtcdVault(b, c, "/arca/partsbench/").open(b)
	ctx := context.Background()
	sealed := strings.Repeat("x", 160) // about a sealed record
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/parts/lock", "", clientv3.WithLease(lease.ID)); err != nil {
		b.Fatal(err)
	}
	lockRev := func() int64 {
		r, err := cli.Get(ctx, "/parts/lock")
		if err != nil || len(r.Kvs) != 1 {
			b.Fatalf("the lock key: %v", err)
		}
		return r.Kvs[0].CreateRevision
	}()
	ok := func(vault.Meta) error { return nil }
	value := vault.NewSecret([]byte("s3cret-value-of-some-length-0123456789"))
	heldRead := func(opts ...clientv3.OpOption) error {
		_, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision("/parts/lock"), "=", lockRev), clientv3.Compare(clientv3.ModRevision("/parts/header"), "=", 0)).
			Then(clientv3.OpGet("/parts/record", opts...)).
			Else(clientv3.OpGet("/parts/header", opts...), clientv3.OpGet("/parts/lock", append(opts, clientv3.WithCountOnly())...)).Commit()
		return err
	}
	parts := []struct {
		name string
		run  func() error
	}{
		{"bare", func() error { _, err := cli.Put(ctx, "/parts/bare", sealed); return err }},
		{"put", func() error {
			_, err := st.Apply(ctx, vault.Write{Kind: vault.Put, Name: "bench/one", Value: value}, ok)
			return err
		}},
		{"held-read", func() error { return heldRead() }},
		{"held-read-serializable", func() error { return heldRead(clientv3.WithSerializable()) }},
		{"commit", func() error {
			_, err := cli.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision("/parts/header"), "=", 0), clientv3.Compare(clientv3.ModRevision("/parts/absent"), "=", 0)).
				Then(clientv3.OpPut("/parts/record", sealed), clientv3.OpPut("/parts/written", ""),
					clientv3.OpPut("/parts/token", "0123456789abcdef0123456789abcdef", clientv3.WithLease(lease.ID)),
					clientv3.OpGet("/parts/lock", clientv3.WithPrefix(), clientv3.WithCountOnly())).
				Else(clientv3.OpGet("/parts/token")).Commit()
			return err
		}},
		{"get", func() error { _, err := cli.Get(ctx, "/parts/bare"); return err }},
		{"get-serializable", func() error { _, err := cli.Get(ctx, "/parts/bare", clientv3.WithSerializable()); return err }},
	}
	if err := parts[1].run(); err != nil { // takes the lock, kept while the loop runs
		b.Fatal(err)
	}
	sums := make([]time.Duration, len(parts))
	for b.Loop() {
		for i, p := range parts {
			t0 := time.Now()
			if err := p.run(); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			sums[i] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(sums[0].Nanoseconds())/float64(b.N), "bare-ns")
	for i, p := range parts[1:] {
		b.ReportMetric(float64(sums[i+1])/float64(sums[0]), p.name+"/bare")
	}
}
