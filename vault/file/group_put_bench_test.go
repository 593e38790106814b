package file

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// BenchmarkPutGroupVsApply times one put made the two ways the contract
// offers, in the same loop over the same vault: Store.Apply, and a group
// of one write (Group, Add, Commit), the path every single write of ops
// takes since the CLI and serve share it. It reports their ratio at 10
// and at 10,000 records: a group of one that cost more than Apply would
// show here, and a cost that grew with the vault would show as a ratio
// that moves between the two sizes.
func BenchmarkPutGroupVsApply(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			f, names := benchVault(b, n)
			ctx := context.Background()
			value := vault.NewSecret([]byte(rand.Text()))
			approve := func(vault.Meta) error { return nil }
			rng := mrand.New(mrand.NewPCG(uint64(n), 2))
			var apply, group time.Duration
			for b.Loop() {
				w := vault.Write{Kind: vault.Put, Name: names[rng.IntN(len(names))], Value: value}
				t0 := time.Now()
				if _, err := f.Apply(ctx, w, approve); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				g, err := f.Group(ctx)
				if err == nil {
					_, err = g.Add(ctx, w, approve)
				}
				if err == nil {
					err = g.Commit(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
				apply, group = apply+t1.Sub(t0), group+time.Since(t1)
			}
			b.ReportMetric(float64(apply.Nanoseconds())/float64(b.N), "apply-ns")
			b.ReportMetric(float64(group.Nanoseconds())/float64(b.N), "group-ns")
			b.ReportMetric(float64(group)/float64(apply), "group/apply")
		})
	}
}
