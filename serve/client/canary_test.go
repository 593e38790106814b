package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// canary is a value that must never show in an error; canaryNum the
// same as a number, for the errors that quote numbers.
const (
	canary    = "CANARY-4f1d9c-s3cret"
	canaryNum = "918273645546372819"
)

// Lines that are broken, or out of step, around a value: no error of
// either path quotes it, whatever the type decoded.
func TestDecodeErrorsHoldNoValue(t *testing.T) {
	lines := []string{
		`{"id":7,"ok":true,"result":{"value":"CANARY`,
		`{"id":7,"ok":true,"result":{"value":"CANARY","version":"CANARY"}}`,
		`{"id":7,"ok":true,"result":{"value":"CANARY","created_at":"CANARY"}}`,
		`{"id":7,"ok":true,"result":{"value":"CANARY","created_at":"2026-11-30TCANARY"}}`,
		`{"id":7,"ok":true,"result":{"value":CANARY}}`,
		`{"id":7,"ok":true,"result":{"value":"x"},"CANARY"}`,
		`{"id":7,"ok":true,"result":{"value":"CANARY\u12"}}`,
		`{"id":7,"ok":true,"result":{"value":"CANARY"}}CANARY`,
		`{"id":7,"ok":true,"result":{"version":-NUM}}`,
		`{"id":7,"ok":true,"result":{"version":NUM.5}}`,
		`{"id":7,"ok":true,"result":{"version":NUMNUMNUM}}`,
		`{"id":7,"ok":true,"result":{"records":NUM,"limits":{"CANARY":"CANARY"},"envs":[NUM]},"ok":"x"}`,
		`{"id":7,"ok":true,"result":{"value":"CANARY","truncated":"CANARY","omitted":-NUM,"version":"x"}}`,
		`{"id":"CANARY","ok":true,"result":{"value":"CANARY"}}`,
		`{"id":NUM,"ok":true}`, `{"id":-NUM,"ok":true}`, `{"id":[NUM],"ok":true}`,
		`{"id":7,"ok":false,"error":{"code":NUM},"policy":{"reason":"CANARY","allow":"CANARY"}}`,
		`{"id":7,"ok":false,"error":"CANARY"}`,
		`{"id":7,"ok":false,"error":{"code":"conflict","message":"m","details":{"current_version":"CANARY"}}}`,
		`{"id":7,"ok":false,"error":{"code":"conflict","message":"m","details":{"current_version":-NUM}}}`,
		`{"id":7,"ok":true,"result":{"ref":"r","version":"CANARY","current":"CANARY","versions":[{"version":"CANARY"}],"destroyed":[NUMNUM]}}`,
		`CANARY`, `"CANARY"`, `NUM`,
	}
	for _, l := range lines {
		line := []byte(strings.NewReplacer("CANARY", canary, "NUM", canaryNum).Replace(l) + "\n")
		if decode(line, sent{id: []byte("7")}, new(Got)) == nil {
			t.Errorf("%s: no error", l)
		}
		for _, err := range []error{
			decode(line, sent{id: []byte("7")}, new(Got)), decode(line, sent{id: []byte("7")}, new(Put)), decode(line, sent{id: []byte("7")}, new(Rotated)),
			decode(line, sent{id: []byte("7")}, new(Removed)), decode(line, sent{id: []byte("7")}, new(Listed)), decode(line, sent{id: []byte("7")}, new(Checked)),
			decode(line, sent{id: []byte("7")}, new(Manifest)), decode(line, sent{id: []byte("7")}, new(struct{})),
			decode(line, sent{id: []byte("7")}, new(HistoryResult)), decode(line, sent{id: []byte("7")}, new(DestroyResult)),
			decode(line, sent{id: []byte("7")}, new(ChangesResult)),
		} {
			if err == nil {
				continue // a type that does not read the broken field
			}
			if msg := err.Error(); strings.Contains(msg, canary) || strings.Contains(msg, canaryNum) || strings.Contains(msg, "CANARY") {
				t.Errorf("%s: the error quotes the value: %s", l, msg)
			}
		}
	}
}

// Through serve: a value put and got never shows when a result or an
// error is printed, and the errors around it do not quote it.
func TestValueNeverPrinted(t *testing.T) {
	c := start(t, home(t, ""))
	ctx := context.Background()
	if _, err := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte(canary)}); err != nil {
		t.Fatal(err)
	}
	g, err := c.Get(ctx, Request{Ref: "arca://app/db"})
	if err != nil || string(g.Value.Reveal()) != canary {
		t.Fatalf("get: %v", err)
	}
	earlier, err := c.Get(ctx, Request{Ref: "arca://app/db", Version: new(uint64(1))})
	if err != nil || string(earlier.Value.Reveal()) != canary {
		t.Fatalf("get of version 1: %v", err)
	}
	h, err := c.History(ctx, Request{Ref: "arca://app/db"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(g), fmt.Sprintf("%v %+v %#v %s %q", g, g, g, g.Value, g.Value), fmt.Sprintf("%+v %#v", earlier, h)} {
		if strings.Contains(s, canary) {
			t.Fatalf("a result printed with its value: %s", s)
		}
	}
	_, err = c.Put(ctx, Request{Ref: "arca://bad ref", Value: []byte(canary)})
	_, err2 := c.Rotate(ctx, Request{Ref: "arca://app/missing", Value: []byte(canary)})
	_, err3 := c.Put(ctx, Request{Ref: "arca://app/db", Env: "nope", Value: []byte(canary)})
	_, err4 := c.Put(ctx, Request{Ref: "arca://app/db", Value: []byte(canary), IfVersion: new(uint64(7))})
	_, err5 := c.Get(ctx, Request{Ref: "arca://app/db", Version: new(uint64(7))})
	for _, err := range []error{err, err2, err3, err4, err5} {
		if err == nil || strings.Contains(fmt.Sprintf("%v %+v", err, err), canary) {
			t.Fatalf("an error around a value: %v", err)
		}
	}
}
