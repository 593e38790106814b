package identity_test

import (
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/arca-secrets/arca/vault/identity"
)

// An identity file may mix native keys, plugin identities and comments, as
// age's own do; a plugin identity's recipient is the one its file's
// comment names, and it is never printed.
func TestParsePluginIdentities(t *testing.T) {
	native, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	yk := plugin.EncodeIdentity("yubikey", []byte("slot 1 handle"))
	ykR := plugin.EncodeRecipient("yubikey", []byte("public part"))
	se := plugin.EncodeIdentity("se", []byte("enclave handle"))
	seR := plugin.EncodeRecipient("se", []byte("enclave public"))
	text := "#       Serial: 1, Slot: 1\n#    Recipient: " + ykR + "\n" + yk + "\n\n" +
		"# created: today\n# public key: " + native.Recipient().String() + "\n" + native.String() + "\n" +
		se + "\n# Public key: " + seR + "\n"
	ids, err := identity.Parse("id.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	if got := identity.Plugins(ids); strings.Join(got, ",") != "yubikey,se" || len(ids) != 3 {
		t.Fatalf("%d identities, plugins %q", len(ids), got)
	}
	var rs []string
	for _, r := range identity.RecipientsOf(ids) {
		rs = append(rs, r.(interface{ String() string }).String())
	}
	if want := native.Recipient().String() + "," + ykR + "," + seR; strings.Join(rs, ",") != want {
		t.Errorf("recipients %q, want %q", rs, want)
	}
	for _, id := range ids {
		if s, ok := id.(interface{ String() string }); ok && strings.Contains(s.String(), "AGE-PLUGIN") {
			t.Errorf("a plugin identity prints its key: %s", s)
		}
	}
}

// A line that is not an identity is named by its number, never quoted.
func TestParseRefusesBadLines(t *testing.T) {
	yk := plugin.EncodeIdentity("yubikey", []byte("slot 1 handle"))
	for _, c := range []struct{ text, want string }{
		{"# c\n" + yk[:len(yk)-2] + "zz\n", "identity file id.txt line 2 is not a valid age plugin identity (AGE-PLUGIN-NAME-1…)"},
		{"AGE-PLUGIN-BAD NAME-1QQQQ\n", "line 1 is not a valid age plugin identity"},
		{yk + "\n" + plugin.EncodeRecipient("yubikey", []byte("x")) + "\n", "identity file id.txt line 2 is a recipient (a public key), not an identity"},
		{yk + "\nAGE-SECRET-KEY-1NOTAKEY\n", "identity file id.txt line 2 is not an age identity"},
		{"# only a comment\n\n", "identity file id.txt holds no valid age identity"},
	} {
		_, err := identity.Parse("id.txt", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.30q: %v, want %q", c.text, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "QQQ") || strings.Contains(err.Error(), yk[12:]) {
			t.Errorf("the error quotes the line: %v", err)
		}
	}
}

// Plugin recipients (age1NAME1…) are taken; a malformed or oversized one,
// or a plugin identity given as a recipient, is described, never quoted.
func TestParsePluginRecipient(t *testing.T) {
	r := plugin.EncodeRecipient("yubikey", []byte("public part"))
	got, err := identity.ParseRecipient(r)
	if err != nil || got.(interface{ String() string }).String() != r {
		t.Fatalf("%v, %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{r[:len(r)-1] + "x", "is not a valid age plugin recipient (age1NAME1…)"},
		{"age1yubikey1" + strings.Repeat("q", identity.MaxPluginRecipient), "is longer than the 4096 bytes"},
		{plugin.EncodeIdentity("yubikey", []byte("slot")), "is an age secret key"},
		{"age1pq1qqqqqqqqqq", "is not an age X25519 public key"},
	} {
		_, err := identity.ParseRecipient(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.in[5:12]) {
			t.Errorf("%.20q: %v, want %q", c.in, err, c.want)
		}
	}
}
