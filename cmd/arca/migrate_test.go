package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A migration SIGKILLed at a random moment leaves the file vault as it was
// before or as it is after, never in between: every round finds either
// none of the migrated records or all of them, each with its value.
func TestMigrateSurvivesKill(t *testing.T) {
	const n, rounds = 3000, 16
	h := newArcaHome(t)
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "export KEY_%05d=\"value %d with a \\\"quote\\\"\"\n", i, i)
	}
	input := filepath.Join(h.dir, "big.env")
	if err := os.WriteFile(input, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	migrate := func() *exec.Cmd {
		cmd := exec.Command("arca", "migrate", "--from", "dotenv", "--ns", "bulk", "--overwrite", input)
		cmd.Env, cmd.Dir = h.env, h.dir
		return cmd
	}
	// How long one takes here, so that the kills land all over it.
	start := time.Now()
	if out, err := migrate().CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v: %s", err, out)
	}
	took := time.Since(start)
	h.clear(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d; one migration takes %v", seed, took)
	rng := rand.New(rand.NewPCG(seed, seed))
	var whole, none int
	for round := range rounds {
		cmd := migrate()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took) * 3 / 2)))
		cmd.Process.Kill()
		cmd.Wait()
		switch got := h.count(t); got {
		case 0:
			none++
		case n:
			whole++
			h.wantValue(t, fmt.Sprintf("arca://bulk/KEY_%05d", rng.IntN(n)))
			h.clear(t) // start again from an empty vault
		default:
			t.Fatalf("round %d: %d of %d records after a kill: the migration landed half-way", round, got, n)
		}
	}
	t.Logf("%d rounds found nothing migrated, %d found it whole", none, whole)
}

// count is how many records the default env's vault holds.
func (h *arcaHome) count(t *testing.T) int {
	t.Helper()
	var res struct{ Records []json.RawMessage }
	if err := json.Unmarshal(h.run(t, nil, "arca", "list", "--json"), &res); err != nil {
		t.Fatal(err)
	}
	return len(res.Records)
}

// wantValue checks that ref holds the value the test's input gave it.
func (h *arcaHome) wantValue(t *testing.T, ref string) {
	t.Helper()
	var i int
	fmt.Sscanf(ref, "arca://bulk/KEY_%d", &i)
	if got, want := string(h.run(t, nil, "arca", "get", ref)), fmt.Sprintf(`value %d with a "quote"`, i); got != want {
		t.Fatalf("%s after a kill: %q, want %q", ref, got, want)
	}
}

// clear empties the default env's vault: the vault file is made anew.
func (h *arcaHome) clear(t *testing.T) {
	t.Helper()
	if err := os.Remove(filepath.Join(h.dir, ".local", "share", "arca", "default.vault")); err != nil {
		t.Fatal(err)
	}
	h.run(t, nil, "arca", "init")
}
