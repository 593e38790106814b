package secret_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault/secret"
)

// TestSecret: a Secret gives its bytes through Reveal alone, compares by
// them, and redacts on every path that prints or encodes it (the vault's
// own test drives every verb, and a Secret inside a record).
func TestSecret(t *testing.T) {
	const canary = "canary-7f3a9c"
	s := secret.New([]byte(canary))
	if string(s.Reveal()) != canary || s.Len() != len(canary) {
		t.Fatalf("Reveal %q, Len %d", s.Reveal(), s.Len())
	}
	if !s.Equal(secret.New([]byte(canary))) || s.Equal(secret.New([]byte("other"))) {
		t.Error("Equal does not compare the bytes")
	}
	j, _ := s.MarshalJSON()
	txt, _ := s.MarshalText()
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("m", "v", s)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s), string(j), string(txt), b.String()} {
		if strings.Contains(out, canary) || !strings.Contains(out, "<redacted>") {
			t.Errorf("printed %q", out)
		}
	}
}
