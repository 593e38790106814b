package identity_test

import (
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault/identity"
)

// A recipient that fails to parse is described by kind, never quoted: a
// secret key pasted by mistake must not be printed back.
func TestParseRecipientNeverEchoes(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	secret := id.String()
	for _, c := range []struct{ in, want string }{
		{secret, "is an age secret key"},
		{" " + strings.ToLower(secret), "is an age secret key"},
		{"age1notakey", "is not an age X25519 public key"},
		{"", "is not an age X25519 public key"},
	} {
		_, err := identity.ParseRecipient(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.12q: %v, want %q", c.in, err, c.want)
			continue
		}
		if c.in != "" && strings.Contains(strings.ToLower(err.Error()), strings.ToLower(strings.TrimSpace(c.in))) {
			t.Errorf("the error quotes its input: %v", err)
		}
	}
	if r, err := identity.ParseRecipient(id.Recipient().String()); err != nil || r == nil {
		t.Fatalf("a public key: %v", err)
	}
}
