package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// BenchmarkEtcdPutVsBare puts a record through the shared vault and,
// interleaved with it in the same loop on the same cluster, makes one
// bare Put of a value of the record's sealed size with the cluster's own
// client (the floor of any write) and one linearizable Get followed by
// that bare Put (the floor of a write that must read what it replaces, as
// a put must, for the version it audits). Each iteration puts:
//   - once while the handle holds the record's lock (a session's next
//     write of it: its commit alone, one raft write);
//   - 10 records as one group (vault.Group, its records reserved as serve
//     does), reported per write;
//   - once more after the handle let go of its locks (it sleeps past
//     holdIdle first, untimed): the lock's round trip and the commit. A
//     bare Put after the same sleep is its floor: a cluster left idle
//     answers its next write more slowly.
//
// Reported: each one's mean and the ratios to the bare Put, on 1 and 3
// members.
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
			putOne := func() {
				if _, err := st.Apply(ctx, vault.Write{Kind: vault.Put, Name: "bench/one", Value: value}, ok); err != nil {
					b.Fatal(err)
				}
			}
			putOne()
			groupNames := make([]string, 10)
			for i := range groupNames {
				groupNames[i] = fmt.Sprintf("bench/g%d", i)
			}
			var held, floor, readFloor, group, cold, coldFloor time.Duration
			idle := func() time.Time {
				time.Sleep(etcd.HoldIdle + 20*time.Millisecond)
				return time.Now()
			}
			for b.Loop() {
				t0 := idle()
				if _, err := raw.Put(ctx, "/bare/one", bare); err != nil {
					b.Fatal(err)
				}
				coldFloor += time.Since(t0)
				t0 = idle()
				putOne() // takes the lock, which it keeps for what follows
				t1 := time.Now()
				putOne()
				t2 := time.Now()
				if _, err := raw.Put(ctx, "/bare/one", bare); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if _, err := raw.Get(ctx, "/bare/one"); err != nil {
					b.Fatal(err)
				}
				if _, err := raw.Put(ctx, "/bare/one", bare); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				g, err := st.Group(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.(vault.Reserver).Reserve(ctx, groupNames); err != nil {
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
				cold, held, floor = cold+t1.Sub(t0), held+t2.Sub(t1), floor+t3.Sub(t2)
				readFloor, group = readFloor+t4.Sub(t3), group+time.Since(t4)
			}
			n := float64(b.N)
			b.ReportMetric(float64(floor.Nanoseconds())/n, "bare-ns")
			b.ReportMetric(float64(held.Nanoseconds())/n, "put-ns")
			b.ReportMetric(float64(held)/float64(floor), "put/bare")
			b.ReportMetric(float64(held)/float64(readFloor), "put/(get+bare)")
			b.ReportMetric(float64(readFloor)/float64(floor), "(get+bare)/bare")
			b.ReportMetric(float64(cold)/float64(floor), "locking-put/bare")
			b.ReportMetric(float64(cold)/float64(coldFloor), "locking-put/idle-bare")
			b.ReportMetric(float64(group)/10/float64(floor), "grouped-put/bare")
		})
	}
}
