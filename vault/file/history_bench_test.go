package file

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// The cost of history, each figure a ratio of two sides measured in turns
// in one loop (docs/performance.md): the sides are a vault of n records
// each holding 10 versions, made by this code's own writes, and the vault
// of n one-version records an earlier arca wrote (benchVault: legacy
// lines, what every vault is today).

// historyVault is a vault of n records, "bench/record-<i>" with 32-byte
// values, each written versions times: versions batches of n puts, a
// minute apart, through ApplyBatch.
func historyVault(b *testing.B, n, versions int) (*Vault, []string) {
	b.Helper()
	start := time.Now()
	dir := b.TempDir()
	path, idPath := filepath.Join(dir, "v", "bench.vault"), filepath.Join(dir, "id", "identity.txt")
	if _, _, err := identity.Ensure(idPath, start); err != nil {
		b.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Create(path, identity.RecipientsOf(ids)); err != nil {
		b.Fatal(err)
	}
	at := start.UTC()
	f, err := Open(path, idPath, func() time.Time { return at })
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("bench/record-%06d", i)
	}
	ws := make(vault.Writes, n)
	for range versions {
		at = at.Add(time.Minute)
		for i, name := range names {
			value := make([]byte, 32)
			rand.Read(value)
			ws[i] = vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret(value)}
		}
		if _, err := f.ApplyBatch(context.Background(), ws, func([]vault.Meta) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	if f, err = Open(path, idPath, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	b.Logf("fixture of %d records × %d versions built and opened in %v", n, versions, time.Since(start).Round(time.Millisecond))
	return f, names
}

func fileSize(b *testing.B, f *Vault) int64 {
	fi, err := os.Stat(f.path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// side is one side of a measure: a name and one op.
type side struct {
	name string
	op   func()
}

// measure runs batch ops of each side in turns, every iteration of b's
// loop, and reports the nanoseconds of one op of each ("ns/<name>") and
// the ratio of each side after the first to the first ("<name>/<first>").
func measure(b *testing.B, batch int, sides ...side) {
	at := make([]time.Duration, len(sides))
	for b.Loop() {
		for i, s := range sides {
			t0 := time.Now()
			for range batch {
				s.op()
			}
			at[i] += time.Since(t0)
		}
	}
	ops := float64(b.N * batch)
	for i, s := range sides {
		b.ReportMetric(float64(at[i].Nanoseconds())/ops, "ns/"+s.name)
		if i > 0 {
			b.ReportMetric(float64(at[i])/float64(at[0]), s.name+"/"+sides[0].name)
		}
	}
}

func putOp(b *testing.B, f *Vault, names []string, seed uint64) func() {
	rng := mrand.New(mrand.NewPCG(seed, 1))
	value := vault.NewSecret([]byte(rand.Text()))
	return func() {
		w := vault.Write{Kind: vault.Put, Name: names[rng.IntN(len(names))], Value: value}
		if _, err := f.Apply(context.Background(), w, approveAll); err != nil {
			b.Fatal(err)
		}
	}
}

func getOp(b *testing.B, f *Vault, names []string, seed uint64) func() {
	stream := nameStream(names, mrand.New(mrand.NewPCG(seed, 1)), 1<<16)
	i := 0
	return func() {
		if _, err := f.Get(context.Background(), stream[i%len(stream)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkHistoryPut: a put into 1,000 records of 10 versions against a
// put into 1,000 legacy records (target: at most 1.5×), and beside each
// its floor, a durable rewrite of a file of its vault's bytes (rewriter):
// a put is mostly the bytes it writes and syncs.
func BenchmarkHistoryPut(b *testing.B) {
	legacy, ln := benchVault(b, 1000)
	hist, hn := historyVault(b, 1000, 10)
	putLegacy, putHist := putOp(b, legacy, ln, 1), putOp(b, hist, hn, 1)
	putLegacy()
	putHist()
	floorLegacy, floorHist := rewriter(b, legacy), rewriter(b, hist)
	measure(b, 1,
		side{"put@legacy", putLegacy}, side{"put@10versions", putHist},
		side{"rewrite@legacy", func() { floorLegacy(true) }},
		side{"rewrite@10versions", func() { floorHist(true) }})
	b.ReportMetric(float64(fileSize(b, hist)), "file-bytes@10versions")
}

// BenchmarkHistoryGet: a get of the current version in 1,000 records of
// 10 versions against one in 1,000 legacy records (target: at most 1.1×).
func BenchmarkHistoryGet(b *testing.B) {
	legacy, ln := benchVault(b, 1000)
	hist, hn := historyVault(b, 1000, 10)
	measure(b, 4096, side{"get@legacy", getOp(b, legacy, ln, 2)}, side{"get@10versions", getOp(b, hist, hn, 2)})
}

// BenchmarkHistoryChain: the whole chain of one name (what history reads)
// against a get of it, in 1,000 records of 10 versions (target: at most
// 2×).
func BenchmarkHistoryChain(b *testing.B) {
	f, names := historyVault(b, 1000, 10)
	stream := nameStream(names, mrand.New(mrand.NewPCG(3, 1)), 1<<16)
	i := 0
	chain := func() {
		if c, err := f.Chain(context.Background(), stream[i%len(stream)]); err != nil || len(c.Previous) != 9 {
			b.Fatalf("Chain: %d previous, %v", len(c.Previous), err)
		}
		i++
	}
	measure(b, 4096, side{"get", getOp(b, f, names, 3)}, side{"chain", chain})
}

// BenchmarkHistoryChangesIdle: changes with nothing changed since the
// cursor, on 10,000 records of 10 versions, against a get on the same
// handle (target: at most 2×): what an agent host polling every second
// costs the vault.
func BenchmarkHistoryChangesIdle(b *testing.B) {
	f, names := historyVault(b, 10_000, 10)
	ctx := context.Background()
	now, err := f.Changes(ctx, "", 0)
	if err != nil {
		b.Fatal(err)
	}
	changes := func() {
		if ch, err := f.Changes(ctx, now.Cursor, 0); err != nil || len(ch.Changes) != 0 || ch.Reset {
			b.Fatalf("Changes: %+v, %v", ch, err)
		}
	}
	measure(b, 4096, side{"get", getOp(b, f, names, 4)}, side{"changes", changes})
}

// BenchmarkHistoryFileSize reports the size of a vault of 1,000 records of
// 10 versions against one of 1,000 legacy records (target: at most 11×)
// and one of 1,000 records written once by this code.
func BenchmarkHistoryFileSize(b *testing.B) {
	legacy, _ := benchVault(b, 1000)
	one, _ := historyVault(b, 1000, 1)
	ten, _ := historyVault(b, 1000, 10)
	for b.Loop() {
	}
	l, o, t := float64(fileSize(b, legacy)), float64(fileSize(b, one)), float64(fileSize(b, ten))
	b.ReportMetric(l, "bytes@legacy")
	b.ReportMetric(o, "bytes@1version")
	b.ReportMetric(t, "bytes@10versions")
	b.ReportMetric(t/l, "10versions/legacy")
	b.ReportMetric(t/o, "10versions/1version")
}
