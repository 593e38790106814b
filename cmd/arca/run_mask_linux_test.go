package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// With --no-mask the child's stdout and stderr are arca's own descriptors
// (a terminal's, when arca has one): no pipe is put between, and none when
// there is no value to scrub (only one under 4 bytes). Masked, they are
// pipes to arca.
func TestRunNoMaskHandsOverStdio(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY-value"))
	h.put(t, "arca://app/short", []byte("Zq9"))
	outPath := filepath.Join(h.dir, "out.txt")
	for _, c := range []struct {
		flag, ref, want string
	}{
		{"--no-mask", "arca://app/k", outPath + "\n" + outPath + "\n"},
		{"--mask", "arca://app/short", outPath + "\n" + outPath + "\n"},
		{"--mask", "arca://app/k", "pipe:"},
	} {
		out, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("arca", "run", c.flag, "--secret", "K="+c.ref, "--",
			"sh", "-c", `a=$(readlink /proc/$$/fd/1); b=$(readlink /proc/$$/fd/2); printf '%s\n%s\n' "$a" "$b" > where.txt`)
		cmd.Env, cmd.Dir = h.env, h.dir
		cmd.Stdout, cmd.Stderr = out, out
		err = cmd.Run()
		out.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.flag, err)
		}
		where, err := os.ReadFile(filepath.Join(h.dir, "where.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(where), c.want) || (c.want == "pipe:" && strings.Count(string(where), "pipe:") != 2) {
			t.Errorf("%s K=%s: the child's stdout and stderr are %q, want %q", c.flag, c.ref, where, c.want)
		}
	}
}

// At a terminal, --no-mask leaves the child's stdout and stderr on it
// (isatty is true in the child); masked, they are not the terminal.
func TestRunNoMaskKeepsTheTerminal(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/k", []byte("k-CANARY-value"))
	const child = `if test -t 1 && test -t 2; then echo "both-tty"; else echo "not-tty"; fi`
	for flag, want := range map[string]string{"--no-mask": "both-tty", "--mask": "not-tty"} {
		s := startTTY(t, h, true, "run", flag, "--secret", "K=arca://app/k", "--", "sh", "-c", child)
		st, screen := s.wait(t)
		if st != 0 || !strings.Contains(screen, want) {
			t.Errorf("%s at a terminal: exit %d, the terminal showed %q, want %q", flag, st, screen, want)
		}
	}
}
