package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/approvalpage"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxDescription bounds the description of a secret request, in bytes.
const MaxDescription = 1024

// requestTool is arca_request_secret: an agent that needs a secret nobody
// stored asks for it by ref, saying why; a human types the value on the
// approval page (requests.go), arca stores it with a put, and the tool
// answers the put's result: the ref and its version, never the value,
// which never passes through MCP. It takes put's fields less the value
// and what a put is conditioned on, and a description.
var requestTool = tool{name: "arca_request_secret", op: "put",
	drop: manifest.FieldValue | manifest.FieldIfVersion | manifest.FieldApproval,
	about: "Ask a human to store a secret that is missing: give its ref and a description of what it is and why it is needed. " +
		"The human types the value on arca's own page (you are asked to send them there); arca stores it and this tool answers the ref and the version stored, never the value. " +
		"A client that cannot open a page gets the page's URL in the error: call again with the same ref for the result once a human stored it."}

// addRequestTool adds arca_request_secret to srv, its requests kept in q
// (which the session's page lists).
func (s *session) addRequestTool(srv *sdk.Server, q *requests) error {
	def, err := requestTool.definition()
	if err != nil {
		return fmt.Errorf("mcp: tool %s: %w", requestTool.name, err)
	}
	in := def.InputSchema.(map[string]any)
	in["properties"].(map[string]any)["description"] = map[string]any{
		"type": "string", "minLength": 1, "maxLength": MaxDescription,
		"description": fmt.Sprintf("what the secret is and why it is needed, shown to the human as your words (at most %d bytes; no control characters but newline and tab)", MaxDescription),
	}
	in["required"] = append(in["required"].([]string), "description")
	def.Annotations = &sdk.ToolAnnotations{OpenWorldHint: new(bool)}
	srv.AddTool(def, s.requestSecret(q))
	return nil
}

// requestSecret is the tool's handler: it asks q for a secret (or
// answers the result of one stored), and answers the retry that carries
// the human's visit to the page.
func (s *session) requestSecret(q *requests) sdk.ToolHandler {
	return func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.noteProtocol(r)
		if w, accepted, ok, err := s.resumed(r); ok {
			if err != nil {
				return s.failed(requestTool, err), nil
			}
			return s.resumeRequest(ctx, q, w, accepted), nil
		}
		return s.askSecret(r, q), nil
	}
}

// askSecret asks q for the secret r's arguments name.
func (s *session) askSecret(r *sdk.CallToolRequest, q *requests) *sdk.CallToolResult {
	k, description, err := s.requestArgs(r)
	if err != nil {
		return s.refuse(requestTool, r, err)
	}
	if s.page == nil {
		return s.failed(requestTool, ops.Errorf(manifest.OpError, "%s needs the approval page, on which a human types the value: set [serve.approvals] listen in arca's config, and the approver's token", requestTool.name))
	}
	if reason, denied := s.svc.Config().Guardrail(k.env, "put", k.path(), k.actor); denied {
		return s.refusePut(k, ops.Errorf(manifest.Denied, "denied by guardrail: %s", reason))
	}
	v, stored, fresh, err := q.ask(k, description)
	if err != nil {
		return s.failed(requestTool, err)
	}
	if stored != nil {
		return s.output(requestTool, *stored)
	}
	url := s.page.RequestURL(v.ID)
	if fresh {
		ev := audit.Event{Event: "request.ask", Op: "put", Outcome: audit.OK, Actor: k.actor, Client: k.client, Env: k.env, Ref: k.path(),
			Message: fmt.Sprintf("%s: a human may store it at %s until %s", v.ID, url, v.ExpiresAt.UTC().Format(time.RFC3339))}
		if err := s.record(ev); err != nil {
			return s.failed(requestTool, err)
		}
	}
	msg := fmt.Sprintf("%s asks for the secret %s (env %s). Open the page to type it: arca stores it, and %s never sees it.", asker(k), k.ref, k.env, requestTool.name)
	if res := s.askVisit(r, waiting{kind: "request", id: v.ID}, url, msg); res != nil {
		return res
	}
	return s.pending(v, url)
}

// resumeRequest answers a retry: the human went to the page (wait for the
// value to be stored), or would not.
func (s *session) resumeRequest(ctx context.Context, q *requests, w waiting, accepted bool) *sdk.CallToolResult {
	switch {
	case w.kind != "request":
		return s.failed(requestTool, ops.Errorf(manifest.BadRequest, "the request state is not one of %s's", requestTool.name))
	case !accepted:
		return s.failed(requestTool, ops.Errorf(manifest.Denied, "the user would not open the page of %s: nothing was stored", w.id))
	}
	ctx, cancel := s.waitContext(ctx)
	defer cancel()
	res, err := q.wait(ctx, w.id)
	if err != nil {
		return s.failed(requestTool, err)
	}
	return s.output(requestTool, res)
}

// pending is the tool error of a request a client cannot send its user
// to: still pending, the page's URL in details.request.
func (s *session) pending(v approvalpage.RequestView, url string) *sdk.CallToolResult {
	e := wireError{Code: manifest.OpError,
		Message: fmt.Sprintf("the secret %s is not stored yet: a human must type it at %s; call %s again with the same ref for the result", v.Ref, url, requestTool.name),
		Details: map[string]any{"request": map[string]any{"id": v.ID, "url": url, "expires_at": ops.Time{Time: v.ExpiresAt}}}}
	return s.failedWith(requestTool, e)
}

// refusePut answers a request no put could fulfil, with its denied event.
func (s *session) refusePut(k requestKey, err error) *sdk.CallToolResult {
	ev := audit.Event{Event: "denied", Op: "put", Outcome: audit.Denied, Code: string(ops.CodeOf(err)), Message: err.Error(),
		Actor: k.actor, Client: k.client, Env: k.env, Ref: k.path()}
	if werr := s.record(ev); werr != nil {
		return s.failed(requestTool, werr)
	}
	return s.failed(requestTool, err)
}

// record writes ev; when it cannot, the session stops (arca does not act
// unaudited) and the error says so.
func (s *session) record(ev audit.Event) error {
	if err := s.audit.Write(ev); err != nil {
		s.stop(fmt.Errorf("%w: %v", ops.ErrAudit, err))
		return ops.Errorf(manifest.OpError, "audit event not written")
	}
	return nil
}

// requestArgs reads a call's arguments: put's ref and env, as put checks
// them, and the description.
func (s *session) requestArgs(r *sdk.CallToolRequest) (requestKey, string, error) {
	rest, description, err := splitDescription(r.Params.Arguments)
	if err != nil {
		return requestKey{}, "", err
	}
	req, err := decodeArgs(requestTool, rest)
	if err != nil {
		return requestKey{}, "", err
	}
	if req.Ref == "" {
		return requestKey{}, "", badArgs(requestTool.name + " needs ref: the secret's arca:// ref")
	}
	ref, err := ops.ParseRef(req.Ref)
	if err != nil {
		return requestKey{}, "", err
	}
	env, err := s.svc.ResolveEnv(req.Env) // the request's env, else the process context's
	if ref.Env != "" {
		env, err = s.svc.Config().ResolveEnv(ref.Env, "", "") // a pin wins
	}
	if err != nil {
		return requestKey{}, "", err
	}
	if err := checkDescription(description); err != nil {
		return requestKey{}, "", err
	}
	client := clientName(r)
	if !ops.ValidActor(client) {
		return requestKey{}, "", badArgs("the client's name must be at most 256 bytes of UTF-8 without control characters")
	}
	return requestKey{actor: s.actor, client: client, env: env, ref: ref.Canonical()}, description, nil
}

// path is the ref's bare path, ns/name, as events and the guardrails
// have it.
func (k requestKey) path() string {
	ref, _ := ops.ParseRef(k.ref)
	return ref.Path()
}

// asker names who asks, for the human.
func asker(k requestKey) string {
	switch {
	case k.actor != "" && k.client != "":
		return k.actor + " (" + k.client + ")"
	case k.actor != "":
		return k.actor
	case k.client != "":
		return k.client
	}
	return "an agent"
}

// splitDescription takes description out of a call's arguments, a JSON
// object: the arguments less it, and it.
func splitDescription(raw []byte) (rest []byte, description string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return raw, "", badArgs(requestTool.name + " needs ref and description")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "", badArgs("the arguments must be a JSON object")
	}
	out := []byte{'{'}
	var seen bool
	for dec.More() {
		tok, err := dec.Token()
		var v json.RawMessage
		if err == nil {
			err = dec.Decode(&v)
		}
		if err != nil {
			return nil, "", badArgs("the arguments are not valid JSON")
		}
		key := tok.(string)
		if key != "description" {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(strconv.AppendQuote(out, key), ':')
			out = append(out, v...)
			continue
		}
		if seen {
			return nil, "", badArgs(`argument "description" is given twice`)
		}
		seen = true
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &description) != nil {
			return nil, "", badArgs(`argument "description" must be a string`)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, "", badArgs("the arguments are not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", badArgs("the arguments hold more than one JSON value")
	}
	if !seen {
		return nil, "", badArgs(requestTool.name + ` needs description: what the secret is and why it is needed`)
	}
	return append(out, '}'), description, nil
}

// checkDescription refuses a description that is empty, over
// MaxDescription bytes, not UTF-8, or holds a control character other
// than newline and tab.
func checkDescription(d string) error {
	switch {
	case d == "":
		return badArgs(`argument "description" is empty: say what the secret is and why it is needed`)
	case len(d) > MaxDescription:
		return badArgs(fmt.Sprintf(`argument "description" is larger than %d bytes`, MaxDescription))
	case !utf8.ValidString(d):
		return badArgs(`argument "description" is not UTF-8`)
	}
	for _, c := range d {
		if unicode.IsControl(c) && c != '\n' && c != '\t' {
			return badArgs(`argument "description" holds a control character (only newline and tab may be in it)`)
		}
	}
	return nil
}
