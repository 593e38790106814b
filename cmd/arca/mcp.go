package main

import (
	"context"
	"errors"
	"flag"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/mcp"
	"github.com/arca-secrets/arca/ops"
)

func mcpCommand() *command {
	var actor *string
	var auditStderr *bool
	return &command{
		name: "mcp", summary: "serve the vault's tools to an agent over the Model Context Protocol on stdio",
		text: "Speak the Model Context Protocol on stdin/stdout, for agent hosts that reach tools through it (docs/mcp.md). " +
			"Its tools list names and metadata, read a name's history and changes, call a configured service or run a configured action with its credential, " +
			"and ask a human to type a missing secret on a loopback page; none returns a secret value. " +
			"Every call goes through the guardrails, the configured policy decision point and the audit trail, as serve's requests do.",
		examples: []string{"arca mcp --actor claude-code", "arca mcp --config ~/.config/arca/agent.toml --audit-stderr"},
		exits:    "0 when the client goes away; 1 a stop signal, a failed stream or audit trail, or a config that cannot load; 2 usage",
		flags: func(fs *flag.FlagSet) {
			actor = fs.String("actor", "", "the `NAME` every request of the session claims, beside the client's own name")
			auditStderr = fs.Bool("audit-stderr", false, "write the audit events on stderr instead of the audit file")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runMCP(ctx, c, fs, args, actor, auditStderr)
		},
	}
}

// runMCP runs one MCP session. Its events go to the audit file, or with
// --audit-stderr to stderr, which is then the audit wire alone: a failure
// is a stop event there, never text.
func runMCP(ctx context.Context, c *cli, fs *verbFlags, args []string, actorFlag *string, auditFlag *bool) error {
	if _, err := c.parse(fs, args, 0); err != nil {
		if !errors.Is(err, flag.ErrHelp) && slices.ContainsFunc(args, isAuditStderrFlag) {
			return c.mcpFailed(true, err) // stderr is the audit wire, even for this
		}
		return err
	}
	actor, auditStderr := *actorFlag, *auditFlag
	cfg, err := ops.LoadConfig(fs.co.config, c.getenv)
	if err != nil {
		return c.mcpFailed(auditStderr, err)
	}
	aw, closeAudit, err := c.mcpAudit(cfg, auditStderr)
	if err != nil {
		return c.mcpFailed(auditStderr, err)
	}
	defer closeAudit()
	if err := c.unlock(cfg); err != nil {
		// The audit trail says why, on the wire or in the file.
		_ = aw.Write(c.cannotStart("cannot start: " + strings.TrimSpace(termsafe.Escape(err.Error()))))
		if auditStderr {
			return reported{err}
		}
		return err
	}
	svc := ops.New(ops.Options{Config: cfg, Audit: aw, Now: c.now, Env: c.contextEnv(fs.co), Backends: c.kinds(), Keys: c.identityKeys(),
		ConsultPDP: true, Environ: c.environ()})
	defer svc.Close()
	signal.Ignore(syscall.SIGPIPE) // a client that goes away is EPIPE, not death
	// A stop signal ends the session as the client's going away does,
	// with its stop event, and the status 1.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = mcp.Serve(ctx, mcp.Options{In: c.stdin, Out: c.raw.stdout, Service: svc, Config: cfg, Audit: aw,
		Env: c.contextEnv(fs.co), Actor: actor, Environ: c.environ(), Who: c.who})
	if err != nil && auditStderr {
		return reported{err} // its stop event said why
	}
	return err
}

// isAuditStderrFlag reports whether arg asks for --audit-stderr (as the
// flag package reads it), so that a usage error is told on the audit wire.
func isAuditStderrFlag(arg string) bool {
	name, val, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return strings.HasPrefix(arg, "-") && name == "audit-stderr" && val != "false"
}

// mcpAudit is the session's audit writer: on stderr, or on the audit
// file the CLI's events go to.
func (c *cli) mcpAudit(cfg *ops.Config, toStderr bool) (*audit.Writer, func(), error) {
	if toStderr {
		return audit.NewWriter(c.raw.stderr, audit.SourceMCP, c.now), func() {}, nil
	}
	path, err := cfg.AuditFile()
	if err != nil {
		return nil, nil, err
	}
	f, err := audit.OpenFile(path)
	if err != nil {
		return nil, nil, opErrorf("%v (nothing is done unaudited)", err)
	}
	return audit.NewWriter(f, audit.SourceMCP, c.now), func() { f.Close() }, nil
}

// mcpFailed reports a session that could not start: as its one stop
// event when stderr is the audit wire, else as an error.
func (c *cli) mcpFailed(toStderr bool, err error) error {
	if !toStderr {
		return err
	}
	w := audit.NewWriter(c.raw.stderr, audit.SourceMCP, c.now)
	_ = w.Write(c.cannotStart("cannot start: " + strings.TrimSpace(termsafe.Escape(err.Error()))))
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return reported{err}
}
