package pdp

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/pdp/pdptest"
)

// allowAll is the cheapest honest PDP.
const allowAll = `echo '{"allow":true}'`

// BenchmarkDecide and BenchmarkBareShell run the same script with the same
// stdin: their ratio is what consulting a PDP costs beyond spawning sh.
func BenchmarkDecide(b *testing.B) {
	cfg := Config{Exec: allowAll, Timeout: quick, Environ: testEnviron()}
	for b.Loop() {
		v, err := Decide(context.Background(), cfg, getReq)
		if err != nil || !v.Allow {
			b.Fatalf("verdict %+v, err %v", v, err)
		}
	}
}

func BenchmarkBareShell(b *testing.B) {
	body, err := encodeRequest(getReq)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command("sh", "-c", allowAll)
		cmd.Env = testEnviron()
		cmd.Stdin = bytes.NewReader(body)
		if _, err := cmd.Output(); err != nil {
			b.Fatal(err)
		}
	}
}

// answerLoop is the cheapest honest persistent PDP: a shell loop that
// answers each request line with a constant allow, echoing its nonce, the
// line's last key (builtins only).
const answerLoop = `while read -r l; do n=${l##*'"nonce":"'}; printf '{"allow":true,"nonce":"%s"}\n' "${n%??}"; done`

// BenchmarkPersistent is one decision at a time on a persistent child
// (serve's lockstep): the shell loop, and the compiled answer program.
func BenchmarkPersistent(b *testing.B) {
	for _, c := range []struct{ name, exec string }{{"sh", answerLoop}, {"compiled", answerProgram(b)}} {
		b.Run(c.name, func(b *testing.B) {
			d := New(Config{Exec: c.exec, Mode: ModePersistent, Timeout: quick, Environ: testEnviron()})
			defer d.Close()
			benchLockstep(b, d)
		})
	}
}

// BenchmarkBarePipe is the floor of BenchmarkPersistent, measured in the
// same run: the same child started with os/exec, one request line written
// and one line read back, nothing checked, no deadline.
func BenchmarkBarePipe(b *testing.B) {
	for _, c := range []struct{ name, exec string }{{"sh", answerLoop}, {"compiled", answerProgram(b)}} {
		b.Run(c.name, func(b *testing.B) {
			cmd := exec.Command("sh", "-c", c.exec)
			cmd.Env = testEnviron()
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			br := bufio.NewReader(out)
			body := mustEncode(persistentRequest{Request{Actor: "agent:ci", Op: "get", Env: "dev", Ref: "app/db"}, newNonce()})
			for b.Loop() {
				if _, err := in.Write(body); err != nil {
					b.Fatal(err)
				}
				if _, err := br.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPersistentPipelined asks 64 decisions per core at a time of one
// persistent child; decisions/s is its throughput.
func BenchmarkPersistentPipelined(b *testing.B) {
	for _, c := range []struct{ name, exec string }{{"sh", answerLoop}, {"compiled", answerProgram(b)}} {
		b.Run(c.name, func(b *testing.B) {
			d := New(Config{Exec: c.exec, Mode: ModePersistent, Timeout: quick, Environ: testEnviron()})
			defer d.Close()
			benchParallel(b, d, 64)
		})
	}
}

// answerProgram builds testdata/answer once per benchmark and returns the
// exec that runs it.
func answerProgram(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "answer")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/answer").CombinedOutput(); err != nil {
		b.Fatalf("go build ./testdata/answer: %v\n%s", err, out)
	}
	return sq(bin)
}

// BenchmarkOPAServer is one decision at a time against a real
// `opa run --server`, one loopback connection per decision.
func BenchmarkOPAServer(b *testing.B) {
	addr := pdptest.FreeAddr(b)
	startOPA(b, addr)
	d := New(Config{URL: "http://" + addr + "/v1/data/arca/decision", API: APIOPA, Timeout: quick})
	defer d.Close()
	benchLockstep(b, d)
}

// BenchmarkOPAEval is the same policy through `opa eval`, one process per
// decision (docs/pdp.md's exec recipe): the baseline of BenchmarkOPAServer.
func BenchmarkOPAEval(b *testing.B) {
	policy, err := filepath.Abs("testdata/opa/policy.rego")
	if err != nil {
		b.Fatal(err)
	}
	script := pdptest.OPA(b) + " eval --stdin-input --format raw --data " + policy + " data.arca.decision"
	d := New(Config{Exec: script, Timeout: 20 * time.Second, Environ: testEnviron()})
	benchLockstep(b, d)
}

func benchLockstep(b *testing.B, d Decider) {
	req := Request{Actor: "agent:ci", Op: "get", Env: "dev", Ref: "app/db"}
	for b.Loop() {
		v, err := d.Decide(context.Background(), req)
		if err != nil || !v.Allow {
			b.Fatalf("verdict %+v, err %v", v, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// benchParallel runs the decisions from goroutines·GOMAXPROCS goroutines.
func benchParallel(b *testing.B, d Decider, goroutines int) {
	b.SetParallelism(goroutines)
	b.RunParallel(func(pb *testing.PB) {
		req := Request{Actor: "agent:ci", Op: "get", Env: "dev", Ref: "app/db"}
		for pb.Next() {
			v, err := d.Decide(context.Background(), req)
			if err != nil || !v.Allow {
				b.Errorf("verdict %+v, err %v", v, err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkParseLine is the verdict parser alone on the lines deciders
// print most: a spawned decider's verdict, and a persistent decider's with
// the nonce it echoes (the fast path takes both).
func BenchmarkParseLine(b *testing.B) {
	verdict := []byte(`{"allow":true,"reason":"agent:ci may read dev"}`)
	b.Run("verdict", func(b *testing.B) {
		for b.Loop() {
			if v, why := parseVerdict(verdict); why != "" || !v.Allow {
				b.Fatal(why)
			}
		}
	})
	nonce := newNonce()
	echoed := []byte(`{"allow":true,"reason":"agent:ci may read dev","nonce":"` + nonce + `"}`)
	b.Run("echoed", func(b *testing.B) {
		for b.Loop() {
			if v, n, why := parseEcho(echoed); why != "" || !v.Allow || string(n) != nonce {
				b.Fatal(why)
			}
		}
	})
}
