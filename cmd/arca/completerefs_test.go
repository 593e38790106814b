package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// hangingBackends are in-memory vaults whose opening, once hang is set,
// blocks until release is closed: a vault that does not answer.
type hangingBackends struct {
	*opstest.MemBackends
	hang    bool
	entered chan struct{}
	release chan struct{}
}

func (b *hangingBackends) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	if b.hang {
		close(b.entered)
		<-b.release
	}
	return b.MemBackends.Open(name, vc, now)
}

// A ref completion whose vault does not answer gives up after
// completeWithin: it returns while the vault is still blocked, prints
// nothing and exits 0.
func TestCompleteRefsBounded(t *testing.T) {
	home := t.TempDir()
	b := &hangingBackends{MemBackends: &opstest.MemBackends{}, entered: make(chan struct{}), release: make(chan struct{})}
	defer close(b.release)
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader("hunter2"), stdout: &out, stderr: &errb, backends: b, now: time.Now,
			getenv:  func(k string) string { return map[string]string{"HOME": home}[k] },
			environ: func() []string { return []string{"HOME=" + home} }}
		st := c.main(context.Background(), args)
		return out.String(), errb.String(), st
	}
	for _, args := range [][]string{{"init"}, {"put", "arca://app/db"}} {
		if out, errb, st := run(args...); st != 0 {
			t.Fatalf("%s: exit %d: %s %s", args, st, out, errb)
		}
	}
	if out, _, st := run("completion", "refs", "arca://a"); st != 0 || out != "arca://app/db\n" {
		t.Fatalf("completion refs: exit %d, %q", st, out)
	}

	b.hang = true
	type result struct {
		out, errb string
		st        int
	}
	done := make(chan result, 1)
	go func() {
		out, errb, st := run("completion", "refs", "arca://a")
		done <- result{out, errb, st}
	}()
	<-b.entered
	select {
	case r := <-done:
		if r.st != 0 || r.out != "" || r.errb != "" {
			t.Fatalf("a vault that does not answer: exit %d, stdout %q, stderr %q; want exit 0 and nothing", r.st, r.out, r.errb)
		}
	case <-time.After(10 * completeWithin):
		t.Fatalf("the completion did not give up within %v", 10*completeWithin)
	}
}
