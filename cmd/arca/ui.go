package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/webpage"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ui"
)

func uiCommand() *command {
	var addr, token *string
	return &command{
		name: "ui", args: "[FILE...]", summary: "serve a read-only web page of the envs' records, their versions, health and audit trail",
		text:     "Serve a read-only web page on loopback: per env the records, paged and searchable, each one's detail (kept versions, never a value, and recent events), the soft-deleted names, the vault's health and recipients, and the audit trail with its chain: the CLI's audit file, or the FILEs given (captured serve wires, other machines' trails), merged in time order, each file's chain shown. It prints the URL, with a token, and serves until interrupted.",
		examples: []string{"arca ui", "arca ui --addr 127.0.0.1:8080", "arca ui ~/.local/state/arca/audit.log wire.log"},
		exits:    plainExits,
		flags: func(fs *flag.FlagSet) {
			addr = fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (a non-loopback host needs --token)")
			token = fs.String("token", "", "the `TOKEN` every request must carry, at least 16 characters, each A-Z a-z 0-9 - . _ ~ + / (or = at its end) (default: $ARCA_UI_TOKEN, else a fresh random one); on the command line, other users of the machine can read it")
		},
		run: func(ctx context.Context, c *cli, fs *verbFlags, args []string) error {
			return runUI(ctx, c, fs, args, addr, token)
		},
	}
}

// runUI is `arca ui [--addr HOST:PORT] [--token TOKEN] [--env ENV]`: the
// read-only web page, on 127.0.0.1 and a free port by default. Its first
// line on stdout is the URL to open, the token in its fragment; it serves
// until interrupted.
func runUI(ctx context.Context, c *cli, fs *verbFlags, args []string, addr, token *string) error {
	files, err := c.parse(fs, args, anyArgs)
	if err != nil {
		return err
	}
	if len(files) > ui.MaxTrails {
		return usagef("%d trails given: arca ui reads at most %d", len(files), ui.MaxTrails)
	}
	if err := distinctTrails(files); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usagef("--addr %q: %v", *addr, err)
	}
	loopback := webpage.Loopback(host)
	from := "--token"
	if *token == "" {
		*token, from = c.getenv("ARCA_UI_TOKEN"), "$ARCA_UI_TOKEN"
	}
	if *token != "" && len(*token) < webpage.MinToken {
		return usagef("the token is %d characters: give one of at least %d (or none, for a fresh random one)", len(*token), webpage.MinToken)
	}
	if *token != "" {
		if err := webpage.CheckToken(*token); err != nil {
			return usagef("%s: %v", from, err)
		}
	}
	if !loopback && *token == "" {
		return usagef("--addr %s is not a loopback address: anyone who can reach it could try tokens, so give one with --token (there is no way to serve it without)", *addr)
	}
	tok := *token
	if tok == "" {
		tok = freshToken()
	}
	// The page's own reads of the vaults are audited as the page's.
	svc, cfg, done, err := c.serviceConfigAs(fs.co, audit.SourceUI)
	if err != nil {
		return err
	}
	defer done()
	if len(files) == 0 {
		auditFile, err := cfg.AuditFile()
		if err != nil {
			return err
		}
		files = []string{auditFile}
	}
	envs := cfg.EnvNames()
	if first := c.contextEnv(fs.co); first != "" && !slices.Contains(envs, first) {
		return usagef("unknown env %q (configured: %s)", first, strings.Join(envs, ", "))
	}
	// A protected identity is asked for once, here, as serve asks: never
	// by the page's first read, with the URL already out.
	if err := c.unlock(cfg); err != nil {
		return err
	}
	if first := c.contextEnv(fs.co); first != "" || cfg.DefaultEnv != "" {
		if first == "" {
			first = cfg.DefaultEnv
		}
		envs = append([]string{first}, slices.DeleteFunc(envs, func(e string) bool { return e == first })...)
	}
	s, err := ui.New(ui.Options{Token: tok, Vaults: access.Service{Service: svc}, Envs: envs, AuditFiles: files, Now: c.now})
	if err != nil {
		return err
	}
	// The trail is read before the URL is out: the first page reads only
	// what came since.
	if err := s.Warm(); err != nil {
		return opErrorf("audit trail: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return opErrorf("listen on %s: %v", *addr, err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	where := net.JoinHostPort(host, port)
	if !loopback {
		c.warnf("warning: arca ui listens on %s, which is not a loopback address: anyone who can reach it and has the token reads the records' names and the audit trail, and the token and the page travel in plain HTTP: put TLS in front of it", where)
	}
	// The token is in the fragment: the browser never sends it to a server;
	// the page moves it into its tab's session storage.
	fmt.Fprintf(c.stdout, "http://%s/#token=%s\n", where, url.QueryEscape(tok))
	return serveUI(ctx, s.HTTPServer(), ln)
}

// serveUI serves on ln until ctx ends or the process is interrupted.
func serveUI(ctx context.Context, srv *http.Server, ln net.Listener) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return opErrorf("arca ui: %v", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return opErrorf("arca ui: %v", err)
	}
	return nil
}

// freshToken is 32 random bytes, hex.
func freshToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
