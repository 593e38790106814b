package client

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A request string that is not valid UTF-8 is refused before anything is
// sent, naming the field and never quoting it: a put of such a value is
// not made (it would have stored U+FFFD in place of the bad bytes), and
// the refused calls hold no place in the window.
func TestNotUTF8Refused(t *testing.T) {
	o := home(t, "")
	o.MaxInFlight = 2
	c := start(t, o)
	ctx := context.Background()
	bad := canary + "bad\xff\xfe"
	sentBefore := c.nextID
	for field, r := range map[string]Request{
		"value":       {Ref: "arca://app/db", Value: []byte(bad)},
		"ref":         {Ref: "arca://app/" + bad, Value: []byte("v")},
		"env":         {Ref: "arca://app/db", Env: bad, Value: []byte("v")},
		"actor":       {Ref: "arca://app/db", Actor: bad, Value: []byte("v")},
		"attestation": {Ref: "arca://app/db", Attestation: bad, Value: []byte("v")},
		"query":       {Ref: "arca://app/db", Value: []byte("v"), Query: map[string][]string{"q": {"ok", bad}}},
		"headers":     {Ref: "arca://app/db", Value: []byte("v"), Headers: map[string]string{bad: "v"}},
		"args":        {Ref: "arca://app/db", Value: []byte("v"), Args: []string{"ok", bad}},
		"services":    {Ref: "arca://app/db", Value: []byte("v"), Services: []string{bad}},
	} {
		for range 5 { // more than the window: a refused call must give its place back
			_, err := c.Put(ctx, r)
			if !errors.Is(err, ErrNotUTF8) || !strings.Contains(err.Error(), "request's "+field+" ") {
				t.Fatalf("a put with a %s that is not UTF-8: %v", field, err)
			}
			if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "\xff") {
				t.Fatalf("the error quotes the %s: %v", field, err)
			}
		}
	}
	if c.nextID != sentBefore {
		t.Fatalf("%d requests were sent for the refused calls", c.nextID-sentBefore)
	}
	_, err := c.Get(ctx, Request{Ref: "arca://app/db"})
	wantCode(t, "get after the refused puts", err, "not_found")
	if _, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte("ok é")}); err != nil {
		t.Fatalf("a valid put after the refused ones: %v", err)
	}
	if g, err := c.Get(ctx, Request{Ref: "arca://app/db"}); err != nil || string(g.Value.Reveal()) != "ok é" {
		t.Fatalf("get: %v", err)
	}
}

// A Resolve that fails wipes the values it had already got.
func TestFailedResolveWipesValues(t *testing.T) {
	c := start(t, home(t, ""))
	ctx := context.Background()
	if _, err := c.Put(ctx, Request{Ref: "arca://app/a", Value: []byte(canary)}); err != nil {
		t.Fatal(err)
	}
	out := Secrets{}
	err := c.resolveInto(ctx, map[string]string{"A": "arca://app/a", "B": "arca://app/missing"}, Request{}, out)
	wantCode(t, "a resolve with a ref missing", err, "not_found")
	if !strings.HasPrefix(err.Error(), "B (arca://app/missing): ") {
		t.Fatalf("a failed resolve: %v", err)
	}
	v := out["A"].Reveal()
	if len(v) != len(canary) {
		t.Fatalf("the value got before the failure: %d bytes", len(v))
	}
	if strings.Trim(string(v), "\x00") != "" {
		t.Fatal("a failed resolve left a value it got unwiped")
	}
	if s, err := c.Resolve(ctx, map[string]string{"A": "arca://app/a", "B": "arca://app/missing"}, Request{}); s != nil || err == nil {
		t.Fatalf("Resolve with a ref missing: %v, %v", s, err)
	}
}
