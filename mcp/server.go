// Package mcp is arca mcp: the Model Context Protocol over stdio, for the
// agents that reach tools through it (SPEC §15). Its tools stand for
// served ops and go through package ops as serve's requests do: the
// fields each op checks, guardrails, the PDP (the MCP client's name in
// its input beside the actor), grants, approvals and the audit trail.
//
// No tool returns a secret value, and none can be made to: the ops a tool
// may stand for are those whose results hold none (list, history,
// changes, and the uses http and exec, whose outcomes are scrubbed), and
// a request for a secret nobody stored is answered on a loopback page a
// human types it on, never through MCP. Every tool's output is scrubbed
// once more against every credential the session used, and capped at
// MaxOutput bytes.
//
// Messages are read through arca's own bounded line reader (transport.go):
// a line over MaxLine is answered with a parse error and skipped, never
// held whole.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/approvalpage"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxOutput caps the line that answers a tool call: its structured
// content and its text together, with the response around them.
const MaxOutput = 256 << 10

// Options configure a session.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Service runs the ops, built to consult the PDP as serve's is, and
	// writing its events to Audit.
	Service *ops.Service
	Config  *ops.Config
	Audit   *audit.Writer
	// Env is the process context's env (--env, else $ARCA_ENV): a session
	// whose env does not resolve does not start.
	Env string
	// Actor is the actor every request of the session claims (--actor);
	// "" claims none. The client's own name goes beside it.
	Actor string
	// Environ is the process's environment: the approval page's token may
	// be in it ($ARCA_APPROVER_TOKEN).
	Environ []string
	// Who is the process serving (audit.ProcessWho): its start event
	// carries it, as serve's does.
	Who audit.Who
}

// session is one MCP session: the service, what it claims, the page its
// approvals are decided on, and the values its outputs are scrubbed
// against.
type session struct {
	svc    *ops.Service
	audit  *audit.Writer
	actor  string
	page   *approvalpage.Server // nil unless [serve.approvals] is set
	scrubs *scrub.Set           // every credential the session's uses registered
	stop   func(error)          // ends the session: its audit trail failed
	// stateKey signs the request states of calls waiting on a human
	// (elicit.go).
	stateKey []byte
	// inputEnded is closed when the client's input ends: a call waiting
	// on a human stops waiting, so that the session can end.
	inputEnded chan struct{}
	// life ends when the session does (a stop signal, a failed stream or
	// audit trail): every message's handling ends with it (endsWithSession).
	life context.Context
	// requests are arca_request_secret's, listed on the page (request.go).
	requests *requests
	// textJSON: the client's protocol version predates structured
	// content, so a result goes as text too (output.go).
	textJSON atomic.Bool
	// spliced carries results' structured content to the transport past
	// the SDK's encoder (splice.go).
	spliced *spliced
}

// Serve speaks MCP on o.In and o.Out until the client goes away (nil),
// or ctx ends or a stream or the audit trail fails (an error). Like
// serve, it says on the audit trail when it starts, with the approval
// page's URL, and when it stops and why; grants still open close then.
func Serve(ctx context.Context, o Options) error {
	if o.Service == nil || o.Config == nil || o.Audit == nil {
		return errors.New("mcp: a service, its config and its audit writer are needed")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := &session{svc: o.Service, audit: o.Audit, actor: o.Actor, scrubs: scrub.NewSet(), stop: cancel, stateKey: newStateKey(), inputEnded: make(chan struct{}), life: ctx, spliced: newSpliced()}
	s.requests = newRequests(o.Service, cancel)
	srv, err := s.server()
	if err == nil {
		err = s.preflight(o)
	}
	if err != nil {
		who := audit.CleanWho(o.Who)
		_ = o.Audit.Write(audit.Event{Event: "stop", Message: "cannot start: " + err.Error(), User: who.User, Host: who.Host})
		return err
	}
	defer s.closePage()
	msg := fmt.Sprintf("arca %s serving MCP", manifest.Version())
	if s.page != nil {
		msg += "; approvals at " + s.page.ListURL()
	}
	who := audit.CleanWho(o.Who)
	if err := o.Audit.Write(audit.Event{Event: "start", Message: msg, User: who.User, Host: who.Host}); err != nil {
		return err
	}
	err = srv.Run(ctx, &lineTransport{in: o.In, out: o.Out, ended: s.inputEnded, spliced: s.spliced})
	return s.end(ctx, o.Audit, err)
}

// preflight refuses to start a session that could only fail: a process
// env that does not resolve, an actor that is no valid claim, an
// approval page that cannot start. It starts the page.
func (s *session) preflight(o Options) error {
	if o.Env != "" {
		if _, err := o.Config.ResolveEnv("", "", o.Env); err != nil {
			return err
		}
	}
	if err := unpinned(o.Config); err != nil {
		return err
	}
	if !ops.ValidActor(o.Actor) {
		return errors.New("the actor must be at most 256 bytes of UTF-8 without control characters")
	}
	if a := o.Config.Serve.Approvals; a != nil {
		p, err := approvalpage.StartWithRequests(o.Service, a, o.Environ, s.requests)
		if err != nil {
			return fmt.Errorf("approval page: %w", err)
		}
		s.page = p
	}
	return nil
}

// unpinned refuses a config found as ./arca.toml in the working directory
// that names what arca uses on an agent's behalf: services and actions
// (where a credential goes, what runs with it) or a PDP (what decides).
// An MCP client starts its servers in the project its agent works on and
// may write to: such a file would be the agent's own choice. serve warns
// of a PDP there; arca mcp does not start. A pinned config (--config,
// $ARCA_CONFIG) or the user's own is used as it is.
func unpinned(cfg *ops.Config) error {
	if cfg.Origin != ops.OriginImplicit {
		return nil
	}
	var sets []string
	if len(cfg.Services) > 0 {
		sets = append(sets, "[services]")
	}
	if len(cfg.Actions) > 0 {
		sets = append(sets, "[actions]")
	}
	if cfg.Serve.PDP != nil {
		sets = append(sets, "[serve.pdp]")
	}
	if len(sets) == 0 {
		return nil
	}
	return fmt.Errorf("config %s comes from the working directory and sets %s: an agent that can write there would choose where credentials go and what decides; pin the config with --config or $ARCA_CONFIG",
		cfg.Path, strings.Join(sets, ", "))
}

// end closes what the session opened and writes its stop event: why it
// stopped. It returns the session's error, nil when the client went away.
func (s *session) end(ctx context.Context, aw *audit.Writer, err error) error {
	s.closePage() // the events of the decisions made on it come before stop
	_ = s.svc.EndGrants()
	reason := "eof"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		err, reason = cause, "the audit trail failed"
	} else if ctx.Err() != nil {
		err, reason = ctx.Err(), "interrupted"
	} else if err != nil && !errors.Is(err, io.EOF) {
		reason = "the connection failed: " + err.Error()
	} else {
		err = nil
	}
	if werr := aw.Write(audit.Event{Event: "stop", Message: reason}); werr != nil && err == nil {
		err = werr
	}
	return err
}

// closePage stops the approval page, if one runs. s.page stays set (a
// call still under way may read its URLs); a second Close does nothing.
func (s *session) closePage() {
	if s.page != nil {
		_ = s.page.Close()
	}
}

// server is the MCP server with every tool of the table added.
func (s *session) server() (*sdk.Server, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "arca", Title: "arca secrets broker", Version: manifest.Version()},
		&sdk.ServerOptions{Instructions: instructions, Logger: nil})
	for _, t := range tools() {
		def, err := t.definition()
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %s: %w", t.name, err)
		}
		srv.AddTool(def, s.handler(t))
	}
	if err := s.addRequestTool(srv, s.requests); err != nil {
		return nil, err
	}
	srv.AddReceivingMiddleware(s.endsWithSession)
	return srv, nil
}

// endsWithSession ends the handling of each message when the session
// ends: a call waiting on a human (on the page, or for the client's
// answer to arca's own question) must not hold a session that a stop
// signal ended.
func (s *session) endsWithSession(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.life, cancel)()
		return next(ctx, method, req)
	}
}

// instructions is what the server tells a client about itself at start.
const instructions = "arca brokers secrets without handing them out: list names and metadata, read a name's history, " +
	"call a configured service or run a configured action with its credential, and ask a human to store a missing secret. " +
	"No tool ever returns a secret value."
