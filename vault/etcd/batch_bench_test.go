package etcd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// BenchmarkApplyBatch10k measures one batch of 10,000 puts of small new
// records into an empty shared vault on a 3-member cluster (all on this
// machine, over loopback): 100 commit units. One op is the whole batch;
// records-per-s is its rate.
func BenchmarkApplyBatch10k(b *testing.B) {
	c := etcdtest.Start(b, 3)
	const n = 10_000
	ws := make([]vault.Write, n)
	for i := range ws {
		ws[i] = vault.Write{Kind: vault.Put, Name: fmt.Sprintf("bench/record-%05d", i), Value: vault.NewSecret([]byte("s3cret-value-of-some-length-0123456789"))}
	}
	ok := func([]vault.Meta) error { return nil }
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		e := newEtcdVault(b, c, fmt.Sprintf("/arca/bench-batch-%d/", i)).open(b)
		b.StartTimer()
		landed, err := e.ApplyBatch(context.Background(), vault.Writes(ws), ok)
		if err != nil || landed != n {
			b.Fatalf("batch: %d landed, %v", landed, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}
