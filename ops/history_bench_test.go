package ops_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
)

// What history costs the ops a caller sends (issue 32's "Measured by"),
// through the ops layer as serve runs them (validation, routing, the
// vault, the audit event): history of one name and a changes poll with
// nothing changed, each against a get, on file vaults whose every name
// holds 10 versions.

// historyService is a service on a file vault of n names of versions
// versions each, its events discarded.
func historyService(b *testing.B, n, versions int) (*ops.Service, []string) {
	b.Helper()
	f := opstest.New(b, opstest.Options{Audit: io.Discard})
	return f.Service, f.FillVersions(b, n, versions)
}

// alternate runs each op in turns of 100 calls, the order of the two
// sides swapped every round, and reports the median ns a call of each and
// their ratio, against the first.
func alternate(b *testing.B, sides [2]string, ops [2]func(i int)) {
	const turn = 100
	var took [2][]float64
	first, i := 0, 0
	for b.Loop() {
		for k := range 2 {
			w := (first + k) % 2
			t0 := time.Now()
			for range turn {
				ops[w](i)
				i++
			}
			took[w] = append(took[w], float64(time.Since(t0))/turn)
		}
		first ^= 1
	}
	var median [2]float64
	for w := range 2 {
		slices.Sort(took[w])
		median[w] = took[w][len(took[w])/2]
		b.ReportMetric(median[w], "ns/"+sides[w])
	}
	b.ReportMetric(median[1]/median[0], sides[1]+"/"+sides[0])
}

// BenchmarkHistoryOpVsGet: the history op of one name against a get of
// one (target: at most 2×), 1,000 names of 10 versions.
func BenchmarkHistoryOpVsGet(b *testing.B) {
	svc, names := historyService(b, 1000, 10)
	ctx := context.Background()
	ref := func(i int) string { return "arca://" + names[(i*7919)%len(names)] }
	alternate(b, [2]string{"get", "history"}, [2]func(int){
		func(i int) {
			if _, err := svc.Get(ctx, ops.Request{Ref: ref(i)}); err != nil {
				b.Fatal(err)
			}
		},
		func(i int) {
			if res, err := svc.History(ctx, ops.Request{Ref: ref(i)}); err != nil || len(res.Versions) != 10 {
				b.Fatalf("history: %d versions, %v", len(res.Versions), err)
			}
		},
	})
}

// BenchmarkChangesIdleOpVsGet: a changes poll with nothing changed since
// its cursor against a get (target: at most 2×), 10,000 names of 10
// versions: what an agent host polling every second costs.
func BenchmarkChangesIdleOpVsGet(b *testing.B) {
	svc, names := historyService(b, 10_000, 10)
	ctx := context.Background()
	now, err := svc.Changes(ctx, ops.Request{})
	if err != nil {
		b.Fatal(err)
	}
	alternate(b, [2]string{"get", "changes"}, [2]func(int){
		func(i int) {
			if _, err := svc.Get(ctx, ops.Request{Ref: "arca://" + names[(i*7919)%len(names)]}); err != nil {
				b.Fatal(err)
			}
		},
		func(int) {
			if res, err := svc.Changes(ctx, ops.Request{Since: now.Cursor}); err != nil || len(res.Changes) != 0 || res.Reset {
				b.Fatalf("changes: %+v, %v", res, err)
			}
		},
	})
}
