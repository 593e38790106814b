// Command arca is a secrets broker: single-shot verbs for people and scripts.
//
// Where every byte goes: stdout carries only the data a verb was asked for
// (a value, a listing, JSON). stderr carries one-line messages for people and
// never a value. Audit events go to the audit file, never to stderr.
//
// Nothing a server or a file says drives the terminal: a verb's stdout and
// stderr are termsafe writers, which escape every control character but
// newline and tab, and a message or report line escapes what it quotes
// from elsewhere (termsafe.Escape), so that a newline there cannot start a
// line of its own. Only what must reach the stream byte for byte goes to
// the raw streams: a value (get, env, export, a deploy target on stdout),
// a child's output (run), the trail's lines (audit --json), serve's
// responses and audit wire.
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/vault/identity"
)

// cli is the process's outside world, passed down so tests can replace it.
type cli struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	getenv  func(string) string
	environ func() []string
	now     func() time.Time
	// who is the process that acts, taken from the OS once
	// (audit.ProcessWho): every event the CLI writes carries it, and
	// serve's start event. Zero: events carry none.
	who       audit.Who
	stdinTTY  bool
	stdoutTTY bool
	global    common // --config and --env given before the verb
	// rotateAt is called at each point of an identity rotation
	// (access.RotateIdentityAt); only the tests set it, to stop it there.
	rotateAt func(point string) error
	// raw is stdout and stderr as given, once guarded has put termsafe
	// writers in their place; nil before.
	raw *rawStreams
	// backends opens the vaults; nil: backend.Kinds, the real ones (a
	// test hands in vaults of its own).
	backends ops.Backends
	// keys loads the identity files, once per process (identityKeys).
	keys *identity.Keys
}

// kinds is what opens c's vaults.
func (c *cli) kinds() ops.Backends {
	if c.backends != nil {
		return c.backends
	}
	return backend.Kinds{Keys: c.identityKeys()}
}

// rawStreams are the process's stdout and stderr, unescaped.
type rawStreams struct{ stdout, stderr io.Writer }

// guarded is c with termsafe writers for stdout and stderr, and the
// streams as given in raw; c itself when it is already.
func (c *cli) guarded() *cli {
	if c.raw != nil {
		return c
	}
	g := *c
	g.raw = &rawStreams{stdout: c.stdout, stderr: c.stderr}
	g.stdout, g.stderr = termsafe.NewWriter(c.stdout), termsafe.NewWriter(c.stderr)
	return &g
}

func main() { os.Exit(start(os.Args[1:], processCLI(time.Now))) }

// start protects the process before anything is read (protect.go), then
// runs the verb args name in c, the process's outside world, and returns
// the exit status. A process that cannot be protected does nothing: exit 1.
func start(args []string, c *cli) int {
	// The standard logger writes to stderr, which is serve's audit wire
	// and, for every verb, for messages arca wrote: a library's line there
	// (net/http reports an HTTP decider's unasked response through it,
	// quoting the server's bytes) would be neither. Nothing arca runs logs.
	log.SetOutput(io.Discard)
	// age's plugin client copies all a plugin says and is told, a data key
	// included, to stderr when $AGEDEBUG is "plugin": never in arca.
	os.Unsetenv("AGEDEBUG")
	clearInherited() // c read it before: processCLI's copy
	perr := protectProcess()
	c = c.guarded()
	if perr != nil {
		err := opErrorf("cannot protect the process (nothing is done): %v", perr)
		if len(args) > 0 && args[0] == "serve" {
			// serve's stderr is the audit wire, even for this.
			c.stopEvent("cannot start: " + err.Error())
			err = reported{err}
		}
		return c.exit(err)
	}
	c.stdinTTY = term.IsTerminal(int(os.Stdin.Fd()))
	c.stdoutTTY = term.IsTerminal(int(os.Stdout.Fd()))
	return c.main(context.Background(), args)
}

// processCLI is the process's own outside world, with the clock now.
func processCLI(now func() time.Time) *cli {
	env := processEnv(os.Environ())
	return &cli{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		getenv:  env.getenv,
		environ: env.environ,
		now:     now,
		who:     audit.ProcessWho(),
	}
}

// main runs one verb and returns the exit status.
func (c *cli) main(ctx context.Context, args []string) int {
	c.identityKeys() // before guarded copies c: one for the process
	c = c.guarded()
	return c.exit(c.dispatch(ctx, args))
}

// dispatch runs the command args name, after the global flags.
func (c *cli) dispatch(ctx context.Context, args []string) error {
	args, asked, err := c.globalArgs(args)
	if err != nil {
		return err
	}
	root := commands()
	switch {
	case asked == "version":
		args = append([]string{"version"}, args...)
	case asked == "help":
		return c.runHelp(ctx, root, args)
	case len(args) == 0:
		c.usage(c.stderr, root)
		return reported{usagef("no command")}
	case args[0] == "help":
		return c.runHelp(ctx, root, args[1:])
	}
	cmd, path, rest, err := root.find(args)
	if err != nil {
		return err
	}
	name := strings.Join(path, " ")
	fs := c.flagSet(name, cmd)
	switch {
	case cmd.run != nil:
		return cmd.run(ctx, c, fs, rest)
	case helpAsked(rest):
		c.printHelp(c.stdout, fs)
		return flag.ErrHelp
	}
	return usagef("usage: arca %s %s ... (run arca help %s)", name, strings.Join(cmd.subNames(), "|"), name)
}
