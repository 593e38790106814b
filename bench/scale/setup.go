package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/bench/rig"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// What the measurements read and write.
const (
	ns          = "scale"              // the namespace of arca's records
	vaultPrefix = "/arca-scale/vault/" // the vault's key prefix
	barePrefix  = "/arca-scale/bare/"  // the bare client's keys
	value       = "s3cret-value-of-some-length-0123456789"
	seeded      = 64  // records put before the run, which the gets read
	ownNames    = 256 // names a lane of own puts writes in turn
)

// bareValue is what the bare client puts: about the size of the sealed
// record arca writes for value.
func bareValue() string { return strings.Repeat("x", 160) }

// startAttempts is how many sets of free ports setUp tries.
const startAttempts = 3

// env is what every measurement runs on: the cluster and one arca home
// whose default env is a vault of kind etcd on it. Every session runs in
// that home: the same identity, as one teammate's many agents.
type env struct {
	o       options
	cluster *launch.Cluster
	home    home
}

// setUp starts a three-member cluster of bin under root, writes the
// home's config, runs arca init and puts the records the gets read, with
// arca and with the bare client. A non-nil env is torn down by the caller,
// even with an error.
func setUp(o options, root, bin string) (*env, error) {
	var c *launch.Cluster
	var err error
	for attempt := 1; ; attempt++ {
		c, err = launch.Start(context.Background(), bin, filepath.Join(root, "etcd", strconv.Itoa(attempt)), 3)
		if err == nil || !errors.Is(err, launch.ErrPortTaken) || attempt == startAttempts {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	e := &env{o: o, cluster: c, home: home{bin: o.arca, dir: filepath.Join(root, "home")}}
	if err := e.home.config(rig.EtcdConfig(c.AllEndpoints(), vaultPrefix, o.timeout)); err != nil {
		return e, err
	}
	if out, err := e.home.cmd("init").CombinedOutput(); err != nil {
		return e, fmt.Errorf("arca init: %w\n%s", err, out)
	}
	progress("putting the %d records the gets read", seeded)
	if err := e.seedServe(); err != nil {
		return e, fmt.Errorf("seeding the vault: %w", err)
	}
	return e, e.seedBare()
}

// tearDown kills the cluster.
func (e *env) tearDown() {
	if err := e.cluster.Kill(); err != nil {
		progress("%v", err)
	}
}

// seedServe puts the seeded records through one session, one at a time.
func (e *env) seedServe() error {
	s, err := e.home.serve()
	if err != nil {
		return err
	}
	defer s.close()
	for i := range seeded {
		line := fmt.Sprintf(`{"id":%d,"op":"put","ref":"arca://%s/g%d","value":%q}`+"\n", i+1, ns, i, value)
		if err := s.roundTrip(line, uint64(i+1), false); err != nil {
			return err
		}
	}
	return nil
}

// seedBare puts the bare client's seeded keys.
func (e *env) seedBare() error {
	cli, err := launch.NewClient(e.cluster.AllEndpoints()...)
	if err != nil {
		return err
	}
	defer cli.Close()
	v := bareValue()
	for i := range seeded {
		ctx, cancel := context.WithTimeout(context.Background(), e.o.timeout)
		_, err := cli.Put(ctx, bareKey(getSeeded, 0, 0, uint64(i)), v)
		cancel()
		if err != nil {
			return fmt.Errorf("seeding the bare keys: %w", err)
		}
	}
	return nil
}

// home is the arca user every session runs as: a HOME of its own, and an
// environment of PATH, HOME and LANG only, so nothing on the machine
// points arca at a real vault.
type home struct {
	bin string
	dir string
}

// cmd is arca with args, run in h's directory (so that no arca.toml in the
// caller's working directory is read).
func (h home) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "LANG=C.UTF-8"}
	cmd.Dir = h.dir
	return cmd
}

// config writes toml as h's user config.
func (h home) config(toml string) error {
	p := filepath.Join(h.dir, ".config", "arca", "arca.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(toml), 0o600)
}
