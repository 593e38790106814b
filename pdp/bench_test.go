package pdp

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
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
