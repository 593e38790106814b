package mcp

import (
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops/opstest"
)

// TestStartNamesTheProcess: the session's start event carries the user
// and host of the process serving, as serve's does; the events of its
// calls name their actor and client instead.
func TestStartNamesTheProcess(t *testing.T) {
	h := newHarness(t, harnessOptions{actor: "agent-7", who: audit.Who{User: "ana", Host: "laptop\x1b"}})
	if res := h.call("arca_list", map[string]any{}); res.IsError {
		t.Fatalf("arca_list failed: %+v", res.Content)
	}
	evs := opstest.Events(t, h.events.Bytes())
	if len(evs) < 2 || evs[0].Event != "start" {
		t.Fatalf("events:\n%s", h.events.Bytes())
	}
	if evs[0].User != "ana" || evs[0].Host != `laptop\x1b` {
		t.Errorf("start: user %q host %q", evs[0].User, evs[0].Host)
	}
	for _, e := range evs[1:] {
		if e.User != "" || e.Host != "" {
			t.Errorf("%s event carries user %q host %q", e.Event, e.User, e.Host)
		}
	}
}
