package ops

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/internal/scrub"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/action"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/pdp"
)

// execUse runs the exec op: a configured action, with the refs of its
// env resolved into the child's environment on top of the PDP child's
// allowlist, its output scrubbed when its event is written.
func (s *Service) execUse(ctx context.Context, op manifest.OpSpec, req Request, held *heldEvent) (Result, error) {
	var ac config.Action
	var args []string
	target := func(c *call, req *Request) ([]useCred, *pdp.Use, error) {
		c.ev.Use.Action = req.Action
		var ok bool
		if ac, ok = s.cfg.Actions[req.Action]; !ok {
			return nil, nil, unknownUse("action", req.Action, slices.Collect(maps.Keys(s.cfg.Actions)))
		}
		var err error
		if args, err = decodeArgs(req.Args); err != nil {
			return nil, nil, err
		}
		if err := action.CheckArgs(ac, args); err != nil {
			return nil, nil, Errorf(manifest.BadRequest, "%v", err)
		}
		creds, err := actionCreds(req.Action, ac)
		return creds, &pdp.Use{Kind: "action", Name: req.Action}, err
	}
	c, creds, err := s.beginUse(ctx, op, req, held, viaOp, target)
	if err != nil {
		return nil, err
	}
	env := pdp.Allowlist(s.environ)
	for _, cr := range creds {
		env = append(env, cr.slot+"="+string(cr.value.Reveal()))
	}
	start := time.Now()
	out, err := action.Run(ctx, ac, args, env)
	c.ev.Use.ElapsedMS = time.Since(start).Milliseconds()
	if err != nil {
		return nil, s.fail(&c, s.runErr(&c, err))
	}
	if out.TimedOut {
		c.ev.Use.Cause = "timeout"
		return nil, s.fail(&c, upstreamFailed("timeout", "action %s: ran past its %d ms and was killed", req.Action, ac.TimeoutMS))
	}
	code := out.ExitCode
	c.ev.Use.ExitCode, c.ev.Use.BytesOut = &code, out.BytesOut
	res := &ExecResult{Action: req.Action, ExitCode: code, Signal: out.Signal, raw: out, use: c.ev.Use, creds: creds,
		ElapsedMS: c.ev.Use.ElapsedMS, Decision: c.decision()}
	if err := s.record(&c, c.ev.Version); err != nil {
		return nil, err
	}
	return res, nil
}

// actionCreds are the refs of an action's env, by variable name, in the
// order of the names.
func actionCreds(name string, ac config.Action) ([]useCred, error) {
	var creds []useCred
	for _, v := range slices.Sorted(maps.Keys(ac.Env)) {
		r, err := parseCredRef("action", name, ac.Env[v])
		if err != nil {
			return nil, err
		}
		creds = append(creds, useCred{slot: v, ref: r})
	}
	return creds, nil
}

// runErr maps a run that did not end to its error: a child that could not
// start is upstream_failed (start); a run cut short because serve is
// stopping is op_error.
func (s *Service) runErr(c *call, err error) error {
	var se *action.StartError
	if errors.As(err, &se) {
		c.ev.Use.Cause = "start"
		return upstreamFailed("start", "action %s: %s", c.ev.Use.Action, se.Msg)
	}
	return Errorf(manifest.OpError, "action %s: %v", c.ev.Use.Action, err)
}

// decodeArgs decodes the args field: an array of strings.
func decodeArgs(raw []byte) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var args []string
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return nil, Errorf(manifest.BadRequest, "args must be an array of strings")
	}
	return args, nil
}

// ExecResult is the result of exec: how the action ended and its output,
// scrubbed. Until Finish has scrubbed it, it holds the raw output and the
// credentials, and encodes nothing of them.
type ExecResult struct {
	Action         string
	ExitCode       int
	Signal         string
	Stdout, Stderr []byte // scrubbed
	Truncated      struct{ Stdout, Stderr bool }
	Redactions     []scrub.Redaction
	ElapsedMS      int64
	Decision

	raw   *action.Result
	use   *audit.Use
	creds []used
}

// scrub replaces the raw output by its scrubbed form and counts the
// redactions into the event.
func (r *ExecResult) scrub(set *scrub.Set) {
	sets := scrubSets(set, r.creds)
	var rs redactions
	r.Truncated = r.raw.Truncated
	r.Stdout = scrubText(sets, r.raw.Stdout, r.Truncated.Stdout, &rs)
	r.Stderr = scrubText(sets, r.raw.Stderr, r.Truncated.Stderr, &rs)
	r.Redactions, r.use.Redactions = rs, rs.total()
	r.raw, r.creds = nil, nil
}

// AppendJSON appends r as the result.exec schema says; output that is not
// UTF-8 has U+FFFD in place of its invalid bytes.
func (r *ExecResult) AppendJSON(b []byte) []byte {
	b = jsonstr.Append(append(b, `{"action":`...), r.Action)
	b = strconv.AppendInt(append(b, `,"exit_code":`...), int64(r.ExitCode), 10)
	b = jsonstr.Append(append(b, `,"signal":`...), r.Signal)
	b = jsonstr.Append(append(b, `,"stdout":`...), r.Stdout)
	b = jsonstr.Append(append(b, `,"stderr":`...), r.Stderr)
	b = strconv.AppendBool(append(b, `,"truncated":{"stdout":`...), r.Truncated.Stdout)
	b = strconv.AppendBool(append(b, `,"stderr":`...), r.Truncated.Stderr)
	b = redactions(r.Redactions).appendJSON(append(b, `},"redactions":`...))
	b = strconv.AppendInt(append(b, `,"elapsed_ms":`...), r.ElapsedMS, 10)
	return append(b, '}')
}
