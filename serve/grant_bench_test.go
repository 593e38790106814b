package serve

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp/pdptest"
	"github.com/arca-secrets/arca/vault"
)

// The benchmark of a get under a grant through a session, against real
// PDPs (issue 31's "Measured by": a get under an open grant at most 1.05×
// a get with the same PDP and no obligations). Each PDP allows every
// request; to an actor starting with "agent:grant" it gives
// arca:max_uses=10000, to one starting with "agent:noted" the obligation
// note:max_uses=10000 (as long, and only recorded), to any other no
// obligations.

// grantRego is the policy of the OPA server.
const grantRego = `package arca

default decision := {"allow": false}

decision := {"allow": true, "obligations": ["arca:max_uses=10000"]} if startswith(input.actor, "agent:grant")

decision := {"allow": true, "obligations": ["note:max_uses=10000"]} if startswith(input.actor, "agent:noted")

decision := {"allow": true} if {
	not startswith(input.actor, "agent:grant")
	not startswith(input.actor, "agent:noted")
}
`

// grantJQ is the policy of the persistent jq PDP, echoing each request's
// nonce.
const grantJQ = `(if (.actor // "" | startswith("agent:grant"))
 then {allow: true, obligations: ["arca:max_uses=10000"]}
 elif (.actor // "" | startswith("agent:noted"))
 then {allow: true, obligations: ["note:max_uses=10000"]}
 else {allow: true}
 end) + {nonce: .nonce}
`

// BenchmarkGrantGetPDP: gets of one record through one session (in this
// process, over real pipes), one at a time, three ways taking turns of
// 20 gets so that all share whatever else the machine does:
//   - none: as agent:plain, allowed with no obligations;
//   - noted: as agent:noted, allowed with an obligation arca records and
//     does not enforce: the verdict as long as grant's, no grant;
//   - grant: as an agent:grant-N the PDP grants max_uses=10000, a new N
//     (a new grant) every 10,000 gets, so all but one get in 10,000 run
//     under an open grant.
//
// Two PDPs: jq, `jq -c --unbuffered` as a persistent exec PDP; opa, a real
// `opa run --server` over its REST data API. Reported for each way: the
// mean and median time of a get; grant/none of both, the target being at
// most 1.05, and grant/noted (what the grant adds beyond the obligation in
// the verdict: the grant in the PDP's input, its bookkeeping).
func BenchmarkGrantGetPDP(b *testing.B) {
	dir := b.TempDir()
	b.Run("jq", func(b *testing.B) {
		jq, err := exec.LookPath("jq")
		if err != nil {
			b.Fatal("jq is not installed")
		}
		policy := filepath.Join(dir, "grant.jq")
		if err := os.WriteFile(policy, []byte(grantJQ), 0o600); err != nil {
			b.Fatal(err)
		}
		benchGrantPDP(b, fmt.Sprintf("[serve.pdp]\nexec = %s\nmode = \"persistent\"\ntimeout_ms = 5000\n",
			quoteTOML(jq+" -c --unbuffered -f "+policy)))
	})
	b.Run("opa", func(b *testing.B) {
		policy := filepath.Join(dir, "grant.rego")
		if err := os.WriteFile(policy, []byte(grantRego), 0o600); err != nil {
			b.Fatal(err)
		}
		addr := pdptest.FreeAddr(b)
		pdptest.StartOPAServer(b, addr, policy)
		benchGrantPDP(b, "[serve.pdp]\nurl = \"http://"+addr+"/v1/data/arca/decision\"\napi = \"opa\"\ntimeout_ms = 5000\n")
	})
}

// benchGrantPDP runs BenchmarkGrantGetPDP's three ways on a session whose
// config is toml.
func benchGrantPDP(b *testing.B, toml string) {
	f := newFixtureConfig(b, toml)
	put := f.ops.NewService(b, opstest.Options{}) // consults no PDP
	if _, err := put.Put(b.Context(), ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte("v"))}); err != nil {
		b.Fatal(err)
	}
	p := startPiped(b, f, 0)
	grants, grantGets, id, grantee := 0, 0, 0, ""
	ways := [3]func(){
		func() { id++; p.grantGet(b, id, "agent:plain", "") },
		func() { id++; p.grantGet(b, id, "agent:noted", "note:max_uses=10000") },
		func() {
			if grantGets%10000 == 0 {
				grants++
				grantee = fmt.Sprintf("agent:grant-%d", grants)
			}
			grantGets++
			id++
			p.grantGet(b, id, grantee, "arca:max_uses=10000")
		},
	}
	for range 50 { // warmed, untimed: the vault opened, the PDP up
		for _, w := range ways {
			w()
		}
	}
	const turn = 20
	var took [3][]time.Duration
	for b.Loop() {
		for r := range 9 {
			for k := range 3 {
				w := (r + k) % 3 // which goes first turns each round
				for range turn {
					t0 := time.Now()
					ways[w]()
					took[w] = append(took[w], time.Since(t0))
				}
			}
		}
	}
	var mean, median [3]float64
	for w, name := range []string{"none", "noted", "grant"} {
		var sum time.Duration
		for _, d := range took[w] {
			sum += d
		}
		slices.Sort(took[w])
		mean[w], median[w] = float64(sum)/float64(len(took[w])), float64(took[w][len(took[w])/2])
		b.ReportMetric(mean[w], name+"-ns/get")
		b.ReportMetric(median[w], name+"-p50-ns/get")
	}
	b.ReportMetric(mean[2]/mean[0], "grant/none")
	b.ReportMetric(median[2]/median[0], "grant/none-p50")
	b.ReportMetric(median[2]/median[1], "grant/noted-p50")
}

// grantGet gets app/db as actor and reads the answer, which must be ok,
// its policy carrying obligation alone, or none when obligation is "".
// The answer is never printed: it holds the value.
func (p *pipedSession) grantGet(b *testing.B, id int, actor, obligation string) {
	if _, err := fmt.Fprintf(p.in, `{"id":%d,"op":"get","ref":"arca://app/db","actor":%q}`+"\n", id, actor); err != nil {
		b.Fatal(err)
	}
	if !p.out.Scan() {
		b.Fatalf("get %d: %v", id, p.out.Err())
	}
	line := p.out.Bytes()
	if !bytes.Contains(line, []byte(`"ok":true`)) {
		b.Fatalf("get %d as %s: %s", id, actor, line) // a failure, which carries no value
	}
	if bytes.Contains(line, []byte(`"obligations":`)) != (obligation != "") ||
		obligation != "" && !bytes.Contains(line, []byte(`"obligations":["`+obligation+`"]`)) {
		b.Fatalf("get %d as %s: the answer's obligations are not [%s]", id, actor, obligation)
	}
}
