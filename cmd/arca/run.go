package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/inject"
	"github.com/arca-secrets/arca/pdp"
)

// secretFlags collects repeated --secret NAME=REF flags. A flag without "="
// is remembered, not refused in Set: the flag package would quote the whole
// argument in its message, and a value pasted there by mistake must not be
// echoed.
type secretFlags struct {
	list      []inject.Injection
	malformed bool
}

func (s *secretFlags) String() string { return "" }

func (s *secretFlags) Set(v string) error {
	name, ref, ok := strings.Cut(v, "=")
	if !ok {
		s.malformed = true
		return nil
	}
	s.list = append(s.list, inject.Injection{Name: name, Ref: ref})
	return nil
}

// injections is what a run or env hands over: every variable of arca's
// environment whose value is a ref, then every --secret, a --secret taking
// the place of a same-named variable; sorted by name, so the order of
// resolution (and of audit events and output) does not depend on the order
// of arca's environment.
func (c *cli) injections(secrets *secretFlags) []inject.Injection {
	given := make(map[string]bool, len(secrets.list))
	for _, in := range secrets.list {
		given[in.Name] = true
	}
	var out []inject.Injection
	for _, in := range inject.RefsInEnviron(c.environ()) {
		if !given[in.Name] {
			out = append(out, in)
		}
	}
	out = append(out, secrets.list...)
	slices.SortStableFunc(out, func(a, b inject.Injection) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// runRun runs a command with the allowlisted environment and the secrets it
// asks for. Once the child started, arca's exit status is the child's:
// its exit code, or 128+N when signal N killed it. Before that arca's own
// statuses apply: a secret that does not resolve, or a command that cannot
// be started, stops the run with a one-line message.
//
// Where bytes go: without --mask the child has arca's stdin, stdout and
// stderr themselves. With --mask its stdout and stderr are pipes that arca
// copies to its own stdout and stderr through redactors.
func runRun(c *cli, args []string) int {
	var co common
	var secrets secretFlags
	fs := c.flags("run", "[--] CMD [ARGS...]", &co)
	fs.Var(&secrets, "secret", "set the child's variable NAME to the secret at REF, once per `NAME=REF`")
	mask := fs.Bool("mask", false, "pass the child's stdout and stderr through arca, every secret value replaced by <redacted:NAME>")
	argv, st := c.parseCommand(fs, args, &secrets)
	if st >= 0 {
		return st
	}
	// The command is found before any secret is read: nothing is
	// materialized for a run that cannot start.
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return c.failf(manifest.ExitOpError, "cannot run %s: %v", argv[0], startErr(cmd.Err))
	}
	svc, done, st := c.service(co)
	if st >= 0 {
		return st
	}
	vars, err := inject.Materialize(c.ctx, svc, c.injections(&secrets))
	// Vault and audit file are closed before the child starts: it may be
	// arca itself, and it holds nothing of arca's while it runs.
	done()
	if err != nil {
		return c.fail(err)
	}
	cmd.Env = childEnv(c.environ(), vars)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.stdin, c.stdout, c.stderr
	var redactors []io.Closer
	if *mask {
		out, errw := inject.NewRedactor(c.stdout, vars), inject.NewRedactor(c.stderr, vars)
		cmd.Stdout, cmd.Stderr = out, errw
		redactors = []io.Closer{out, errw}
	}
	return c.runChild(cmd, argv[0], redactors)
}

// childEnv is the child's whole environment: the entries of environ that
// the PDP allowlist keeps (SPEC §9), less those an injection replaces, then
// the injections.
func childEnv(environ []string, vars []inject.Materialized) []string {
	injected := make(map[string]bool, len(vars))
	for _, v := range vars {
		injected[v.Name] = true
	}
	env := pdp.Allowlist(environ) // never nil: an empty list is an empty environment
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return injected[name]
	})
	for _, v := range vars {
		env = append(env, v.Name+"="+string(v.Value.Reveal()))
	}
	return env
}

// maskWaitDelay is how long arca keeps copying a masked child's output after
// the child exited, for output still in flight.
const maskWaitDelay = 5 * time.Second

// runChild starts cmd, forwards SIGINT, SIGTERM and SIGHUP to it until it
// exits, flushes the redactors and returns the child's status.
func (c *cli) runChild(cmd *exec.Cmd, name string, redactors []io.Closer) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// With --mask, a grandchild that keeps the child's output open must not
	// hold arca after the child exits: the pipes close after this delay.
	cmd.WaitDelay = maskWaitDelay
	if err := cmd.Start(); err != nil {
		return c.failf(manifest.ExitOpError, "cannot run %s: %v", name, startErr(err))
	}
	exited := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s) // the child may have exited already
			case <-exited:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-forwarded
	for _, r := range redactors {
		if cerr := r.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if st, ok := exitStatus(cmd.ProcessState); ok {
		if err != nil && cmd.ProcessState.Success() {
			// The child succeeded but its output could not be passed on.
			return c.failf(manifest.ExitOpError, "%s: %v", name, err)
		}
		return st
	}
	return c.failf(manifest.ExitOpError, "%s: %v", name, err)
}

// exitStatus is the status a shell would report for ps: the exit code, or
// 128+N for a child killed by signal N.
func exitStatus(ps *os.ProcessState) (int, bool) {
	if ps == nil {
		return 0, false
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return ps.ExitCode(), true
}

// startErr drops the "exec: NAME:" that os/exec puts before the cause.
func startErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// parseCommand parses the flags of run and what follows them: the command,
// at least one argument, taken as is (a "--" ends the flags). It returns -1
// to go on, or the exit status to stop with.
func (c *cli) parseCommand(fs *verbFlags, args []string, secrets *secretFlags) ([]string, int) {
	if st := c.parseFlags(fs, args); st >= 0 {
		return nil, st
	}
	switch {
	case secrets.malformed:
		return nil, c.failf(manifest.ExitUsage, "--secret wants NAME=REF, e.g. --secret DB_PASSWORD=arca://app/db (%s)", fs.usage())
	case fs.NArg() == 0:
		return nil, c.failf(manifest.ExitUsage, "no command to run (%s)", fs.usage())
	}
	return fs.Args(), -1
}
