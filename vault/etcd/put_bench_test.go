package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// BenchmarkEtcdPutVsBare puts a record through the shared vault and,
// interleaved with it in the same loop on the same cluster, makes one
// bare Put of a value of the record's sealed size with the cluster's own
// client: the floor of any write. Each iteration also puts 10 records as
// one group (vault.Group), whose cost is reported per write. Reported:
// each one's mean and the ratios to the bare Put, on 1 and 3 members.
func BenchmarkEtcdPutVsBare(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			c := etcdtest.Start(b, members)
			st := newEtcdVault(b, c, "/arca/putbench/").open(b)
			raw := c.Client(b)
			ctx := context.Background()
			ok := func(vault.Meta) error { return nil }
			value := vault.NewSecret([]byte("s3cret-value-of-some-length-0123456789"))
			bare := strings.Repeat("x", 160) // about a sealed record of that value
			if _, err := st.Apply(ctx, vault.Write{Kind: vault.Put, Name: "bench/one", Value: value}, ok); err != nil {
				b.Fatal(err)
			}
			var put, floor, group time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := st.Apply(ctx, vault.Write{Kind: vault.Put, Name: "bench/one", Value: value}, ok); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := raw.Put(ctx, "/bare/one", bare); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				g, err := st.Group(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for i := range 10 {
					if _, err := g.Add(ctx, vault.Write{Kind: vault.Put, Name: fmt.Sprintf("bench/g%d", i), Value: value}, ok); err != nil {
						b.Fatal(err)
					}
				}
				if err := g.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				put, floor, group = put+t1.Sub(t0), floor+t2.Sub(t1), group+time.Since(t2)
			}
			n := float64(b.N)
			b.ReportMetric(float64(put.Nanoseconds())/n, "put-ns")
			b.ReportMetric(float64(floor.Nanoseconds())/n, "bare-ns")
			b.ReportMetric(float64(group.Nanoseconds())/n/10, "grouped-put-ns")
			b.ReportMetric(float64(put)/float64(floor), "put/bare")
			b.ReportMetric(float64(group)/10/float64(floor), "grouped-put/bare")
		})
	}
}
