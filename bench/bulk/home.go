package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one run of a child process.
type sample struct {
	wall   time.Duration
	rssKiB int64 // peak resident set size
	stdout []byte
	stderr []byte
}

// measure runs cmd to its end and reports its wall time and peak RSS. A
// failed run is an error that holds the child's stderr.
func measure(cmd *exec.Cmd) (sample, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start), stdout: out.Bytes(), stderr: errb.Bytes()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		s.rssKiB = ru.Maxrss // KiB on Linux, where the figures are taken (bytes on macOS)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w\n%s%s", strings.Join(cmd.Args, " "), err, errb.Bytes(), tail(out.Bytes()))
	}
	return s, nil
}

// tail is the last few lines of b, for error messages.
func tail(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return bytes.Join(lines, nil)
}

// home is one fresh arca user: a HOME of its own under the temp dir.
type home struct {
	bin string
	dir string
}

// newHome makes the directory of a new home called label under root.
func newHome(bin, root, label string) (home, error) {
	h := home{bin: bin, dir: filepath.Join(root, label)}
	return h, os.MkdirAll(h.dir, 0o700)
}

// env is the whole environment arca gets: no XDG_* or ARCA_* variables, so
// every path is the default under HOME.
func (h home) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "LANG=C.UTF-8"}
}

// cmd is arca with args in h, run in h's directory (so that no arca.toml
// in the caller's working directory is read).
func (h home) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, args...)
	cmd.Env, cmd.Dir = h.env(), h.dir
	return cmd
}

// run runs arca with args in h and measures it.
func (h home) run(args ...string) (sample, error) { return measure(h.cmd(args...)) }

// runWith is run with env (NAME=value) added to h's environment.
func (h home) runWith(env []string, args ...string) (sample, error) {
	cmd := h.cmd(args...)
	cmd.Env = append(cmd.Env, env...)
	return measure(cmd)
}

// identity is where arca keeps the default identity (docs/config.md).
func (h home) identity() string { return filepath.Join(h.dir, ".config", "arca", "identity.txt") }

// vaultFile is where arca keeps the default env's file vault.
func (h home) vaultFile() string {
	return filepath.Join(h.dir, ".local", "share", "arca", "default.vault")
}

// config writes toml as h's user config.
func (h home) config(toml string) error {
	p := filepath.Join(h.dir, ".config", "arca", "arca.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(toml), 0o600)
}

// initHome makes a new home under root and runs arca init in it, after
// setup (which may write a config or an identity) when it is not nil.
func initHome(bin, root, label string, setup func(home) error) (home, error) {
	h, err := newHome(bin, root, label)
	if err != nil {
		return h, err
	}
	if setup != nil {
		if err := setup(h); err != nil {
			return h, err
		}
	}
	_, err = h.run("init")
	return h, err
}

// counted matches the summary line arca's bulk verbs print on stderr.
var counted = regexp.MustCompile(`(\d+) created, (\d+) overwritten, (\d+) skipped`)

// checkCreated checks that a bulk verb's summary says it created n
// records, and that it printed one row per record.
func checkCreated(verb string, s sample, n int) error {
	m := counted.FindSubmatch(s.stderr)
	if m == nil {
		return fmt.Errorf("%s: no summary line on stderr:\n%s", verb, s.stderr)
	}
	if string(m[1]) != strconv.Itoa(n) || string(m[2]) != "0" || string(m[3]) != "0" {
		return fmt.Errorf("%s: want %d created, 0 overwritten, 0 skipped; arca said: %s", verb, n, m[0])
	}
	if rows := bytes.Count(s.stdout, []byte("\n")); rows != n {
		return fmt.Errorf("%s: %d rows on stdout, want %d", verb, rows, n)
	}
	return nil
}

// spotChecks are the indexes of the values read back after a write: the
// first and last, and one of each kind values makes.
func spotChecks(n int) []int {
	idx := []int{0, 3, 6, 9, n - 1}
	return slices.DeleteFunc(idx, func(i int) bool { return i >= n })
}

// checkValues reads a few secrets back from h's default env with arca get
// and compares them with the input.
func checkValues(h home, in input) error {
	for _, i := range spotChecks(len(in.values)) {
		s, err := h.run("get", "arca://"+ns+"/"+name(i))
		if err != nil {
			return err
		}
		if got := string(s.stdout); got != in.values[i] {
			return fmt.Errorf("arca get %s: got %q, want %q", name(i), got, in.values[i])
		}
	}
	return nil
}
