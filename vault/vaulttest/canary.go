package vaulttest

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// A canary record: a name and a value that must never be seen outside
// the vault, in any encoding.
const (
	CanaryName  = "canaryns/canaryname-4411"
	CanaryValue = "CANARY-7f3a9c"
)

// CanaryForms are the canary's name and value as they could leak: their
// Forms.
func CanaryForms() []string { return Forms(CanaryName, CanaryValue, "canaryname-4411") }

// Forms are the spellings each of ss could leak in: plain, hex (either
// case), and base64 in both alphabets. A string inside a longer base64
// string may start at any offset; dropping the k (0 to 2) leading bytes
// that bring it onto a 3-byte boundary, its whole groups encode the same
// whatever bytes stand around them, so one of the three cuts is there.
func Forms(ss ...string) []string {
	var out []string
	for _, s := range ss {
		b := []byte(s)
		out = append(out, s, hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)))
		for k := range 3 {
			g := b[k:]
			g = g[:len(g)/3*3]
			out = append(out, base64.RawStdEncoding.EncodeToString(g), base64.RawURLEncoding.EncodeToString(g))
		}
	}
	return out
}

// WantNoCanary fails t if text holds the canary in any of its forms.
func WantNoCanary(t testing.TB, where, text string) {
	t.Helper()
	for _, c := range CanaryForms() {
		if strings.Contains(text, c) {
			t.Errorf("%s contains %q", where, c)
		}
	}
}
