package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	"github.com/arca-secrets/arca/vault"
)

// TestListNamesNoValue: arca_list answers the env's names and metadata as
// list's result, never a value; the PDP is asked with the session's
// actor and the client's name; the event names both.
func TestListNamesNoValue(t *testing.T) {
	h := newHarness(t, harnessOptions{actor: "agent-7", client: "probe-client"})
	const canary = "canary-d41d8cd98f00b204"
	if _, err := h.fix.Service.Put(context.Background(), ops.Request{Ref: "arca://app/db", Value: vault.NewSecret([]byte(canary))}); err != nil {
		t.Fatal(err)
	}
	res := h.call("arca_list", map[string]any{})
	if res.IsError {
		t.Fatalf("arca_list failed: %+v", res.Content)
	}
	var out ops.ListResult
	structured(t, res, &out)
	if out.Env != "default" || len(out.Records) != 1 || out.Records[0].Ref != "arca://app/db" || out.Records[0].Version != 1 {
		t.Fatalf("arca_list = %+v", out)
	}
	asked := h.decider.requests()
	if len(asked) != 1 || asked[0].Op != "list" || asked[0].Actor != "agent-7" || asked[0].Client != "probe-client" {
		t.Fatalf("the PDP was asked %+v", asked)
	}
	var listed bool
	for _, ev := range opstest.Events(t, h.events.Bytes()) {
		if ev.Event == "list" {
			listed = ev.Actor == "agent-7" && ev.Client == "probe-client" && ev.Outcome == "ok"
		}
	}
	if !listed {
		t.Fatalf("no list event names the actor and the client:\n%s", h.events.Bytes())
	}
	if strings.Contains(string(h.transcript.Bytes()), canary) {
		t.Fatal("the value reached an MCP message")
	}
}

// TestListDeniedByPolicy: a deny is a tool error carrying denied and the
// PDP's reason, and nothing of the env.
func TestListDeniedByPolicy(t *testing.T) {
	h := newHarness(t, harnessOptions{decide: func(pdp.Request) pdp.Verdict {
		return pdp.Verdict{Allow: false, Reason: "not this agent"}
	}})
	e := toolError(t, h.call("arca_list", map[string]any{}))
	if e.Code != "denied" || !strings.Contains(e.Message, "not this agent") {
		t.Fatalf("error = %+v", e)
	}
}

// TestArgumentsRefused: an argument the tool does not take, one of the
// wrong kind, and one that claims an actor are each bad_request naming
// it, audited.
func TestArgumentsRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"bogus": 1}, `takes no argument "bogus"`},
		{map[string]any{"actor": "root"}, `takes no argument "actor"`},
		{map[string]any{"deleted": "yes"}, `"deleted" must be true or false`},
		{map[string]any{"env": strings.Repeat("e", 200)}, `"env" is larger than 128 bytes`},
	} {
		e := toolError(t, h.call("arca_list", tc.args))
		if e.Code != "bad_request" || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%v: error = %+v, want bad_request with %q", tc.args, e, tc.want)
		}
	}
	var refused int
	for _, ev := range opstest.Events(t, h.events.Bytes()) {
		if ev.Outcome == "bad_request" {
			refused++
		}
	}
	if refused != 4 {
		t.Fatalf("%d refusals audited, want 4:\n%s", refused, h.events.Bytes())
	}
}

// TestProtocolVersions: a client of each protocol version the SDK
// negotiates lists the tools and calls one; the session speaks the
// version the client asked for.
func TestProtocolVersions(t *testing.T) {
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(v, func(t *testing.T) {
			h := newHarness(t, harnessOptions{protocol: v})
			if got := h.session.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %q, want %q", got, v)
			}
			tools, err := h.session.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				if tl.OutputSchema == nil || tl.InputSchema == nil {
					t.Errorf("%s lacks a schema", tl.Name)
				}
			}
			for _, want := range []string{"arca_list", "arca_history", "arca_changes", "arca_http", "arca_action"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			if res := h.call("arca_list", nil); res.IsError {
				t.Fatalf("arca_list failed: %+v", res.Content)
			}
		})
	}
}
