package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handler runs t's op for each call of the tool: its arguments decoded as
// the op's fields, the session's actor and the client's name claimed,
// through ops as serve's requests go, and its outcome made the tool's
// output (output.go).
func (s *session) handler(t tool) sdk.ToolHandler {
	return func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.noteProtocol(r)
		req, err := decodeArgs(t, r.Params.Arguments)
		if err != nil {
			return s.refuse(t, r, err), nil
		}
		retry, err := s.awaitApproval(ctx, r, &req) // a retry waits for the human (approval.go)
		if err != nil {
			return s.failed(t, err), nil
		}
		res, err := s.run(ctx, t, r, req)
		if err != nil {
			if ask := s.askApproval(r, err, retry); ask != nil {
				return ask, nil
			}
			return s.failed(t, err), nil
		}
		return s.output(t, res), nil
	}
}

// run runs t's op on req as the session's actor and r's client.
func (s *session) run(ctx context.Context, t tool, r *sdk.CallToolRequest, req ops.Request) (ops.Result, error) {
	spec, ok := manifest.Op(t.op)
	if !ok {
		return nil, ops.Errorf(manifest.UnknownOp, "unknown op %q", t.op)
	}
	req.Op, req.Actor, req.Client = t.op, s.actor, clientName(r)
	req.Scrub = s.scrubs // a use's credentials join it: later outputs are scrubbed against them
	res, err := s.svc.Do(ctx, spec, req)
	if errors.Is(err, ops.ErrAudit) {
		s.stop(err) // arca does not act unaudited
	}
	return res, err
}

// refuse answers a call whose arguments could not be read as its op's
// fields, with its one event, as serve answers a request line it cannot
// read: the claims recorded as ops records them, the message (which may
// quote an argument) scrubbed as every output is.
func (s *session) refuse(t tool, r *sdk.CallToolRequest, err error) *sdk.CallToolResult {
	msg := string(s.scrub([]byte(err.Error())))
	ev := audit.Event{Event: "error", Op: t.op, Outcome: audit.BadRequest, Code: string(ops.CodeOf(err)), Message: msg, Actor: s.actor}
	if c := clientName(r); ops.ValidActor(c) {
		ev.Client = c
	}
	if werr := s.audit.Write(ev); werr != nil {
		s.stop(fmt.Errorf("%w: %v", ops.ErrAudit, werr))
		return s.failed(t, ops.Errorf(manifest.OpError, "audit event not written"))
	}
	return s.failed(t, err)
}

// clientName is the name the calling client gave for itself: per request
// (2026-07-28 and later), else at initialize.
func clientName(r *sdk.CallToolRequest) string {
	if info := r.ClientInfo(); info != nil {
		return info.Name
	}
	return ""
}
