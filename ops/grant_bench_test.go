package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
)

// What a grant costs a get (issue 31's "Measured by"): a test that the PDP
// decides every one of 10,000 gets under arca:max_uses=10000, and the
// benchmarks of a get under an open grant against a get with the same PDP
// and no obligations.

const (
	grantRef    = "arca://app/db"
	grantUses   = 10000
	grantPrefix = "agent:grant" // the actors the PDP grants max_uses to
	plainActor  = "agent:plain" // the actor it allows with no obligations
)

// The verdict lines grantPDP parses when it works: the allow with the
// grant's obligation, and the plain allow.
var (
	grantLine = []byte(`{"allow":true,"obligations":["arca:max_uses=10000"]}`)
	plainLine = []byte(`{"allow":true}`)
)

// grantPDP allows every request: with arca:max_uses=10000 for an actor
// starting with grantPrefix, with no obligations for any other. It counts
// its decisions of each kind. With work, each decision does what a
// decider does on arca's side of a fast PDP: the request encoded as JSON,
// the verdict line parsed. With keep, it keeps the grant of every input.
type grantPDP struct {
	work, keep bool

	granted, plain atomic.Int64
	mu             sync.Mutex
	inputs         []*pdp.Grant
}

func (p *grantPDP) Decide(_ context.Context, req pdp.Request) (pdp.Verdict, error) {
	grant := strings.HasPrefix(req.Actor, grantPrefix)
	if grant {
		p.granted.Add(1)
	} else {
		p.plain.Add(1)
	}
	if p.keep {
		p.mu.Lock()
		p.inputs = append(p.inputs, req.Grant)
		p.mu.Unlock()
	}
	if !p.work {
		if grant {
			return pdp.Verdict{Allow: true, Obligations: []string{"arca:max_uses=10000"}}, nil
		}
		return pdp.Verdict{Allow: true}, nil
	}
	if _, err := json.Marshal(req); err != nil {
		return pdp.Verdict{}, err
	}
	line := plainLine
	if grant {
		line = grantLine
	}
	var v pdp.Verdict
	err := json.Unmarshal(line, &v)
	return v, err
}

func (p *grantPDP) Close() error { return nil }

// grantService is a service that consults d, on a fixture whose
// [serve.pdp] allows nothing (so a get d did not decide fails), holding
// grantRef put by a service that consults no PDP. Its events go to events.
func grantService(tb testing.TB, d pdp.Decider, events io.Writer) *ops.Service {
	tb.Helper()
	f := opstest.New(tb, opstest.Options{Config: "[serve.pdp]\nexec = \"false\"\ntimeout_ms = 1000\n"})
	ctx := context.Background()
	if _, err := f.Service.Put(ctx, ops.Request{Ref: grantRef, Value: vault.NewSecret([]byte("v"))}); err != nil {
		tb.Fatal(err)
	}
	svc := ops.New(ops.Options{Config: f.Config, Audit: audit.NewWriter(events, audit.SourceServe, nil),
		ConsultPDP: true, Decider: d, Backends: backend.Kinds{}})
	tb.Cleanup(func() { svc.Close() })
	return svc
}

// TestGrantTenThousandGets: under arca:max_uses=10000, 10,000 gets
// succeed and the 10,001st is denied grant_exhausted; the PDP decided all
// 10,001, the first without a grant in its input (its allow opens it),
// each after it with the one grant, its uses counting up.
func TestGrantTenThousandGets(t *testing.T) {
	d := &grantPDP{keep: true}
	var events bytes.Buffer
	svc := grantService(t, d, &events)
	ctx := context.Background()
	req := ops.Request{Ref: grantRef, Actor: grantPrefix}
	for i := 1; i <= grantUses; i++ {
		r, err := svc.Get(ctx, req)
		if err != nil {
			t.Fatalf("get %d of %d: %v", i, grantUses, err)
		}
		if !bytes.Equal(r.Value.Reveal(), []byte("v")) {
			t.Fatalf("get %d: not the value put", i)
		}
	}
	_, err := svc.Get(ctx, req)
	if ops.CodeOf(err) != manifest.Denied || ops.CauseOf(err) != "grant_exhausted" {
		t.Fatalf("get %d: %v (cause %q), want denied grant_exhausted", grantUses+1, err, ops.CauseOf(err))
	}
	if n := d.granted.Load(); n != grantUses+1 || len(d.inputs) != grantUses+1 {
		t.Fatalf("the PDP decided %d of %d gets (%d inputs kept)", n, grantUses+1, len(d.inputs))
	}
	if g := d.inputs[0]; g != nil {
		t.Fatalf("the first get's input has a grant: %+v", g)
	}
	id := ""
	for i, g := range d.inputs[1:] {
		uses, state := i+1, "active"
		if uses == grantUses {
			state = "exhausted"
		}
		if g == nil || g.Uses != uses || g.MaxUses != grantUses || g.State != state || (id != "" && g.ID != id) {
			t.Fatalf("get %d: the PDP's input has the grant %+v, want %d uses of %d, %s, %s", i+2, g, uses, grantUses, state, id)
		}
		id = g.ID
	}
	// Every event of the grant names it: its open, the 10,000 gets, its
	// close and the denied get.
	for ev, want := range map[string]int{`"event":"grant.open"`: 1, `"event":"grant.close"`: 1, `"message":"exhausted"`: 1,
		`"event":"get","op":"get","outcome":"ok"`: grantUses, `"grant":"` + id + `"`: grantUses + 3} {
		if n := bytes.Count(events.Bytes(), []byte(ev)); n != want {
			t.Errorf("%d events with %s, want %d", n, ev, want)
		}
	}
}

// BenchmarkGrantGet: a get under an open grant against a get with no
// obligations, the PDP the same in-process decider doing arca's side of a
// fast PDP's work (the request encoded, the verdict parsed). Target:
// grant/none at most 1.05.
func BenchmarkGrantGet(b *testing.B) { benchGrantWays(b, &grantPDP{work: true}) }

// BenchmarkGrantBookkeeping: the same with a decider that answers at
// once, so the difference is the grant's bookkeeping alone. Target:
// bookkeeping-ns/get at most 2,000; grant-decisions/get exactly 1.
func BenchmarkGrantBookkeeping(b *testing.B) { benchGrantWays(b, &grantPDP{}) }

// benchGrantWays runs gets of grantRef on one service consulting d, two
// ways taking turns of 100 gets, which goes first swapping each time, so
// that both share whatever else the machine does:
//   - none: as plainActor, whom d allows with no obligations;
//   - grant: as an actor d grants arca:max_uses=10000, a new actor (a
//     new grant) every 10,000 gets, so every get but one in 10,000 runs
//     under an open grant and the one opens it.
//
// Reported: each way's mean and median (of its turns) time a get, their
// ratio grant/none and their difference (the bookkeeping, ns a get), and
// the PDP's decisions a get of each way.
func benchGrantWays(b *testing.B, d *grantPDP) {
	svc := grantService(b, d, io.Discard)
	ctx := context.Background()
	plain := ops.Request{Ref: grantRef, Actor: plainActor}
	granted, actors := ops.Request{Ref: grantRef}, 0
	grantGets := 0
	get := func(req ops.Request) {
		if _, err := svc.Get(ctx, req); err != nil {
			b.Fatalf("get as %s: %v", req.Actor, err)
		}
	}
	ways := [2]func(){
		func() { get(plain) },
		func() {
			if grantGets%grantUses == 0 {
				actors++
				granted.Actor = grantPrefix + "-" + strconv.Itoa(actors)
			}
			grantGets++
			get(granted)
		},
	}
	const turn = 100
	for range turn { // warmed, untimed: the vault opened
		ways[0]()
	}
	d.plain.Store(0)
	var took [2][]float64 // ns a get, one a turn
	var gets [2]int
	first := 0
	for b.Loop() {
		for k := range 2 {
			w := (first + k) % 2
			t0 := time.Now()
			for range turn {
				ways[w]()
			}
			took[w] = append(took[w], float64(time.Since(t0))/turn)
			gets[w] += turn
		}
		first ^= 1
	}
	if int(d.granted.Load()) != gets[1] || int(d.plain.Load()) != gets[0] {
		b.Fatalf("the PDP decided %d of %d gets under a grant, %d of %d with none", d.granted.Load(), gets[1], d.plain.Load(), gets[0])
	}
	var mean, median [2]float64
	for w, name := range []string{"none", "grant"} {
		for _, ns := range took[w] {
			mean[w] += ns
		}
		mean[w] /= float64(len(took[w]))
		slices.Sort(took[w])
		median[w] = took[w][len(took[w])/2]
		b.ReportMetric(mean[w], name+"-ns/get")
		b.ReportMetric(median[w], name+"-p50-ns/get")
	}
	b.ReportMetric(mean[1]/mean[0], "grant/none")
	b.ReportMetric(median[1]/median[0], "grant/none-p50")
	b.ReportMetric(mean[1]-mean[0], "bookkeeping-ns/get")
	b.ReportMetric(median[1]-median[0], "bookkeeping-p50-ns/get")
	b.ReportMetric(float64(d.granted.Load())/float64(gets[1]), "grant-decisions/get")
	b.ReportMetric(float64(d.plain.Load())/float64(gets[0]), "none-decisions/get")
}
