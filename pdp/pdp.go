// Package pdp runs arca's policy decision point (PDP): an external command
// that serve consults before every op that can materialize a secret (get,
// put, rm, rotate, list, check). It uses the standard library only and never
// sees a secret value.
//
// serve consults it through a Decider (decider.go), which New builds from
// Config: by default one process per decision (Decide, below); with Mode
// persistent one long-lived child fed one request per line
// (persistent.go); with URL a policy server over HTTP, OPA's data API or
// OpenID AuthZEN (http.go). Every decider keeps the bounds below per
// decision.
//
// # Contract
//
// One decision is one process. Decide runs `sh -c <exec>` and writes the
// Request to the child's stdin as one JSON object and a newline, then closes
// stdin:
//
//	{"actor":"agent:ci","attestation":"…","op":"get","env":"prod","ref":"ns/name","supported_obligations":["arca:approval","arca:max_uses","arca:no_reveal","arca:ttl"]}
//
// actor, attestation and ref are omitted when empty; ref is the bare
// "ns/name" and is absent on list and check; supported_obligations, the
// arca: obligations the caller enforces, is omitted when it lists none;
// grant, the grant opened for the request's actor, env, ref and use
// (Grant), is omitted when there is none. The child answers on stdout
// with exactly one JSON object (whitespace around it is fine):
//
//	{"allow": true, "reason": "…", "obligations": ["…"]}
//
// allow is required and must be a JSON boolean; reason, when present, must be
// a string; obligations, when present, an array of strings. Keys match exactly
// ("Allow" is not allow), any other key is ignored, and allow, reason or
// obligations given twice makes the verdict unusable. The verdict counts only
// once stdout has reached end of file and the child has exited with status 0.
// Nothing is cached: every call runs the command again.
//
// # Where bytes go
//
//   - stdin carries the request only, written from its own goroutine, so a
//     child that never reads cannot block arca.
//   - stdout carries the verdict, read into one buffer of MaxVerdict+1 bytes.
//   - stderr is /dev/null: arca never reads it, so a PDP may log there and
//     none of it reaches arca's own output.
//   - Unreachable.Why names a cause; it never carries the request, the
//     verdict text or anything the child wrote.
//
// # Environment and working directory
//
// The child's environment is Allowlist(cfg.Environ) and nothing else:
//
//	PATH HOME USER LOGNAME SHELL LANG LC_* TERM TZ TMPDIR
//
// No ARCA_* variable, no cloud or forge token, nothing else of the parent's.
// An empty allowlist is an empty environment, never the parent's. The shell
// may add its own variables (dash exports PWD). The working directory is the
// caller's.
//
// # Bounds
//
//   - Config.Timeout covers the whole decision, from spawn to verdict. At the
//     deadline, or when ctx is done, the decision is unreachable.
//   - The verdict is at most MaxVerdict bytes. arca reads at most one byte
//     more; a child that writes it is killed and judged unreachable.
//   - The child leads its own process group. Once the decision is made — by
//     verdict, by failure, by deadline or because ctx is done (serve
//     cancels it when a signal stops the session) — the whole group gets
//     SIGKILL at once, and only then is the child reaped, so the group id
//     cannot have been reused by then. No child or grandchild outlives the
//     decision, and a grandchild that holds stdout open cannot stretch it
//     past the deadline. A process that leaves the group on purpose (setsid)
//     escapes the kill; arca closes its own pipe ends, so the decision still
//     ends on time.
//   - Decide starts three goroutines (request writer, verdict reader, exit
//     watcher) and waits for all three before it returns.
//
// # Failures
//
// Every failure is an *Unreachable, and the caller fails closed unless it
// chose otherwise. Why is one of:
//
//	cause                                        Why
//	Config.Timeout zero or negative              timeout must be positive
//	ctx done, before or during the decision      cancelled: context canceled
//	no complete verdict by the deadline          timed out after 5s
//	  (a hang; a child that exits, even after
//	  a valid verdict, while a grandchild still
//	  holds stdout; a child that closes stdout
//	  but does not exit)
//	sh cannot be started                         cannot start sh: <error>
//	pipe or read failure                         cannot create pipe: <error>, cannot read verdict: <error>
//	more than MaxVerdict bytes on stdout         verdict larger than 65536 bytes
//	exit status not 0, even after a valid allow  exited with status 3
//	killed by a signal                           killed by signal 9 (killed)
//	nothing but whitespace on stdout             verdict is empty
//	not JSON                                     verdict is not JSON
//	JSON, but not an object                      verdict is not a JSON object
//	anything after the object but whitespace     verdict has data after the JSON object
//	allow missing, null, "true", 1, …            verdict has no boolean allow
//	reason present but not a string (null too)   verdict reason is not a string
//	obligations present but not [string, …]      verdict obligations is not an array of strings
//	allow, reason or obligations given twice     verdict repeats key allow
//
// # Trust root
//
// Exec is shell code run with arca's own user and privileges. Whoever
// controls the config chooses it, so being able to write the config means
// being able to run code as arca; serve warns when the config came from the
// working directory. The allowlist keeps arca's environment (ARCA_*, tokens)
// from the PDP, not the files its user can read.
//
// The package is Linux-only: it waits for the child's exit with
// waitid(WNOWAIT) so that the process group is killed before the child is
// reaped.
package pdp

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
)

// MaxVerdict is the verdict cap in bytes (64 KiB).
const MaxVerdict = 64 << 10

// Request is what the PDP reads on stdin as one JSON object:
// {"actor","attestation","op","env","ref","use","supported_obligations","grant","approval"};
// all but op and env are omitted when empty (ref is the bare "ns/name",
// absent on list/check).
type Request struct {
	Actor string `json:"actor,omitempty"`
	// Client is the name the MCP client gave for itself, for a request
	// that came through arca mcp: a claim beside the actor's.
	Client      string `json:"client,omitempty"`
	Attestation string `json:"attestation,omitempty"`
	Op          string `json:"op"`
	Env         string `json:"env"`
	Ref         string `json:"ref,omitempty"`
	// Use says what a use (http, exec, a request through the proxy)
	// would do with the credential named by Ref; nil for every other op.
	Use *Use `json:"use,omitempty"`
	// SupportedObligations lists the arca: obligations the caller
	// enforces; a verdict carrying any other arca: obligation is a deny.
	SupportedObligations []string `json:"supported_obligations,omitempty"`
	// Grant is the grant the request falls under (SPEC §14), active or
	// closed; nil when none was opened for its key.
	Grant *Grant `json:"grant,omitempty"`
	// Approval is the approval the request was retried with (SPEC §14):
	// its state as of the request, and once decided who decided and the
	// scope granted; nil when the request carries none.
	Approval *Approval `json:"approval,omitempty"`
}

// Approval is the approval object of a PDP request: its id, its state
// ("pending", "approved", "denied" or "expired"), and once decided the
// approver and the scope (nil while pending or when denied).
type Approval struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Approver string `json:"approver,omitempty"`
	Scope    *Scope `json:"scope,omitempty"`
}

// Scope is what an approval grants: at most Uses uses for at most TTLS
// seconds, each 0 (left out) when unbounded; both 0 is the rest of the
// session.
type Scope struct {
	Uses int `json:"uses,omitempty"`
	TTLS int `json:"ttl_s,omitempty"`
}

// Grant is the grant object of a PDP request: its id, the uses it has
// counted, its bounds (max_uses 0: unbounded by count; expires_at, RFC
// 3339, absent: unbounded by time) and its state, "active", "exhausted"
// or "expired" as of the request.
type Grant struct {
	ID        string `json:"id"`
	Uses      int    `json:"uses"`
	MaxUses   int    `json:"max_uses"`
	ExpiresAt string `json:"expires_at,omitempty"`
	State     string `json:"state"`
}

// Use is the use object of a PDP request (SPEC §13): a service's or an
// action's name, and for a service the method and path asked for, never
// its query, headers or body.
type Use struct {
	Kind   string `json:"kind"` // "service" or "action"
	Name   string `json:"name"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Via    string `json:"via"` // "op" or "proxy"
}

// Verdict is the PDP's answer. Unknown fields in the child's JSON are
// ignored. Obligations is nil when the child gave none.
type Verdict struct {
	Allow       bool
	Reason      string
	Obligations []string
}

// Config is how to run the PDP. Exec and URL exclude each other (the config
// parser refuses both); New picks the Decider from them.
type Config struct {
	Exec     string        // run as: sh -c <Exec>
	Mode     string        // with Exec: ModeSpawn (or "") or ModePersistent
	URL      string        // an HTTP PDP: http://<loopback>[:port]/path or unix:<socket path>
	HTTPPath string        // with a unix: URL, the request path (see http.go)
	API      string        // with URL: APIOPA or APIAuthZEN
	Timeout  time.Duration // the whole decision, spawn (or request) to verdict
	Environ  []string      // the parent's environment (os.Environ()); only the allowlist reaches the child
}

// Unreachable is why a PDP gave no usable verdict. Why is one short line
// naming the cause; it never holds the verdict text, the request or anything
// the child wrote.
type Unreachable struct{ Why string }

func (u *Unreachable) Error() string { return "pdp unreachable: " + u.Why }

func unreachable(why string) error { return &Unreachable{Why: why} }

// Decide runs one decision. Every failure is *Unreachable. It never caches.
func Decide(ctx context.Context, cfg Config, req Request) (Verdict, error) {
	v, _, err := decide(ctx, cfg, req, "sh")
	return v, err
}

// decide is Decide with the shell named, and it reports the child's process
// group id (0 when no child started) so tests can check that none of the
// group survives.
func decide(ctx context.Context, cfg Config, req Request, shell string) (Verdict, int, error) {
	if cfg.Timeout <= 0 {
		return Verdict{}, 0, unreachable("timeout must be positive")
	}
	if ctx.Err() != nil {
		return Verdict{}, 0, unreachable(doneWhy(ctx, cfg.Timeout))
	}
	body, err := encodeRequest(req)
	if err != nil {
		return Verdict{}, 0, err
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	c, err := start(shell, cfg.Exec, Allowlist(cfg.Environ), body)
	if err != nil {
		return Verdict{}, 0, err
	}
	why := c.await(dctx)
	if why == whyDeadline {
		why = doneWhy(ctx, cfg.Timeout)
	}
	status := c.stop() // always: the decision is made
	if why == "" {
		why = status
	}
	if why != "" {
		return Verdict{}, c.pgid, unreachable(why)
	}
	v, why := parseVerdict(c.out)
	if why != "" {
		return Verdict{}, c.pgid, unreachable(why)
	}
	return v, c.pgid, nil
}

// doneWhy says why a decision whose context is done ended: the caller
// cancelled it, or the PDP's own timeout ran out.
func doneWhy(ctx context.Context, timeout time.Duration) string {
	if err := ctx.Err(); err != nil {
		return "cancelled: " + err.Error()
	}
	return "timed out after " + timeout.String()
}

// encodeRequest is the request as the child reads it (a Request, or a
// persistentRequest): one JSON object and a newline, with <, > and & left
// as they are so that shell PDPs can grep.
func encodeRequest(req any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil {
		return nil, unreachable("cannot encode request")
	}
	return buf.Bytes(), nil
}
