package file_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/file"

	"github.com/arca-secrets/arca/vault"
)

// TestFileSurvivesKill SIGKILLs a writer process at a random moment, many
// times. After every kill the vault opens, every acknowledged write is there
// with its value, a write in flight is either there whole or not at all, and
// the writer lock died with the writer.
func TestFileSurvivesKill(t *testing.T) {
	const rounds = 40
	v := newFileVault(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var acked []int
	next, kills := 0, 0
	for round := range rounds {
		p := startWriter(t, ctx, v, "loop", next)
		p.waitReady(t)
		// Kill among writes: after the first acknowledged one, at a random
		// moment of the ones that follow.
		first := p.waitAck(t)
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		rest, err := p.acks()
		got := append([]int{first}, rest...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.String() != "signal: killed" {
			t.Fatalf("round %d: writer ended with %v, want killed", round, err)
		}
		kills++
		acked = append(acked, got...)
		if len(got) > 0 {
			next = got[len(got)-1] + 1
		}
		verifyAfterKill(t, v, acked, next)
	}
	if len(acked) < rounds {
		t.Errorf("only %d writes acknowledged in %d rounds: the kills did not land among writes", len(acked), kills)
	}
	t.Logf("%d kills, %d acknowledged writes", kills, len(acked))
}

// probeName is what the test itself puts after each kill.
const probeName = "parent/probe"

// verifyAfterKill opens the vault afresh and checks it: acknowledged writes
// readable, nothing but whole writes present, healthy, and writable without
// waiting on the dead writer's lock.
func verifyAfterKill(t *testing.T, v fileVault, acked []int, next int) {
	t.Helper()
	f, err := file.Open(v.path, v.idPath, nil)
	if err != nil {
		t.Fatalf("OpenFile after a kill: %v", err)
	}
	defer f.Close()
	ctx := context.Background()
	for _, i := range acked {
		name := "k/" + strconv.Itoa(i)
		r, err := f.Get(ctx, name)
		if err != nil || string(r.Value.Reveal()) != "v-"+strconv.Itoa(i) {
			t.Fatalf("acknowledged %s after a kill: %v", name, err)
		}
	}
	metas, err := f.List(ctx)
	if err != nil {
		t.Fatalf("List after a kill: %v", err)
	}
	for _, m := range metas {
		if m.Name == probeName {
			continue
		}
		// At most the write after the last acknowledged one was in flight.
		if i, err := strconv.Atoi(strings.TrimPrefix(m.Name, "k/")); err != nil || i > next {
			t.Fatalf("unexpected record %s after a kill (next write %d)", m.Name, next)
		}
	}
	if rep, err := f.Check(ctx); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("Check after a kill: %v %q", err, rep.Problems)
	}
	putWithin(t, f, probeName, 10*time.Second)
}

// putWithin puts through f and fails the test if that takes longer than d:
// the writer lock is still held.
func putWithin(t *testing.T, f *file.Vault, name string, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := f.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte("probe"))}, approveAll)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("put after a kill: %v", err)
		}
	case <-time.After(d): // a guard against a hang, not a timing assertion
		t.Fatalf("put after a kill still waiting after %v: the lock outlived its writer", d)
	}
}

// TestFileConcurrentProcesses: writer processes putting to one name lose no
// update.
func TestFileConcurrentProcesses(t *testing.T) {
	const procs, each = 4, 50
	v := newFileVault(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ps := make([]*writerProc, procs)
	for i := range ps {
		ps[i] = startWriter(t, ctx, v, "count", each)
	}
	var wg sync.WaitGroup
	results := make([]struct {
		acked []int
		err   error
	}, procs)
	for i, p := range ps {
		wg.Go(func() { results[i].acked, results[i].err = p.acks() })
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil || len(r.acked) != each {
			t.Errorf("writer %d: %d puts acknowledged, exit %v; want %d, success", i, len(r.acked), r.err, each)
		}
	}
	rec, err := v.open(t).Get(context.Background(), sharedProcName)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != procs*each {
		t.Errorf("%s: version %d after %d puts: updates were lost", sharedProcName, rec.Version, procs*each)
	}
}
