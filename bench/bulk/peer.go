package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

// peerImported matches the summary line of the peer's import.
var peerImported = regexp.MustCompile(`imported (\d+) secret\(s\) \((\d+) new`)

// benchPeer times, once, the peer's import of the same dotenv file on its
// stdin into its own fresh store, after its init.
func benchPeer(o options, root string, in input) (row, error) {
	r := row{what: "arenzana/arca import (dotenv on stdin)", n: o.n, input: in.size, peer: true}
	dir := filepath.Join(root, "peer")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return r, err
	}
	if _, err := measure(peerCmd(o.peer, dir, "init")); err != nil {
		return r, err
	}
	f, err := os.Open(in.path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	progress("peer import of %d secrets (slow)", o.n)
	cmd := peerCmd(o.peer, dir, "import")
	cmd.Stdin = bufio.NewReader(f)
	s, err := measure(cmd)
	if err != nil {
		return r, err
	}
	m := peerImported.FindSubmatch(s.stderr)
	if m == nil || string(m[1]) != strconv.Itoa(o.n) || string(m[2]) != strconv.Itoa(o.n) {
		return r, fmt.Errorf("peer import: want %d imported, all new; it said:\n%s", o.n, tail(s.stderr))
	}
	r.add(s)
	return r, checkPeerValues(o.peer, dir, in)
}

// peerCmd is the peer with args in its store in dir, run non-interactively
// as its own tests run it: every path it uses given by the environment.
func peerCmd(bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8",
		"ARCA_STORE=" + filepath.Join(dir, "store.json"),
		"ARCA_IDENTITY=" + filepath.Join(dir, "identity.txt"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
	}
	return cmd
}

// checkPeerValues reads a few secrets back with the peer's get.
func checkPeerValues(bin, dir string, in input) error {
	for _, i := range spotChecks(len(in.values)) {
		s, err := measure(peerCmd(bin, dir, "get", name(i)))
		if err != nil {
			return err
		}
		if got := string(s.stdout); got != in.values[i] {
			return fmt.Errorf("peer get %s: got %q, want %q", name(i), got, in.values[i])
		}
	}
	return nil
}
