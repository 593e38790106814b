package client

import (
	"context"
	"strings"
	"testing"
)

// A tool's output piped through a ScrubWriter, written one byte at a time
// and in uneven pieces, reaches the writer with the released value
// redacted, the same text as one scrub of the whole; the counts add up;
// a value under 4 bytes is reported, not redacted.
func TestScrubWriter(t *testing.T) {
	c := start(t, home(t, ""))
	ctx := context.Background()
	const secret = "tok-9f8e7d6c5b"
	for ref, v := range map[string]string{"arca://app/token": secret, "arca://app/pin": "123"} {
		if _, err := c.Put(ctx, Request{Ref: ref, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	output := "connecting… token=" + secret + "\nretry with " + secret + " ✓ pin 123\n"
	whole, err := c.Scrub(ctx, Request{Text: output})
	if err != nil || whole.Text != output {
		t.Fatalf("scrub before any get: %+v, %v; want the text unchanged", whole, err)
	}
	for _, ref := range []string{"arca://app/token", "arca://app/pin"} {
		if _, err := c.Get(ctx, Request{Ref: ref}); err != nil {
			t.Fatal(err)
		}
	}
	whole, err = c.Scrub(ctx, Request{Text: output})
	if err != nil || strings.Contains(whole.Text, secret) || strings.Count(whole.Text, "<redacted:app/token>") != 2 {
		t.Fatalf("scrub after the get: %+v, %v", whole, err)
	}
	for _, size := range []int{1, 3, 7, len(output)} {
		var out strings.Builder
		w := c.NewScrubWriter(ctx, &out, "tool", "")
		b := []byte(output)
		for len(b) > 0 {
			n := min(size, len(b))
			if k, err := w.Write(b[:n]); err != nil || k != n {
				t.Fatalf("write of %d: %d, %v", n, k, err)
			}
			b = b[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != whole.Text {
			t.Errorf("writes of %d bytes gave %q, want %q", size, out.String(), whole.Text)
		}
		if w.Redactions["arca://app/token"] != 2 || len(w.Unscrubbable) != 1 || w.Unscrubbable[0] != "arca://app/pin" {
			t.Errorf("writes of %d bytes: redactions %v, unscrubbable %q", size, w.Redactions, w.Unscrubbable)
		}
		if _, err := w.Write([]byte("x")); err == nil {
			t.Errorf("a write after Close succeeded")
		}
	}
	var none strings.Builder
	if err := c.NewScrubWriter(ctx, &none, "empty", "").Close(); err != nil || none.Len() != 0 {
		t.Errorf("closing a writer never written: %v, %q", err, none.String())
	}
}
