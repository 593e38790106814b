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

// CanaryForms are the canary's name and value as they could leak: plain,
// base64 and hex.
func CanaryForms() []string {
	var out []string
	for _, s := range []string{CanaryName, CanaryValue, "canaryname-4411"} {
		b := []byte(s)
		out = append(out, s,
			base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
			base64.URLEncoding.EncodeToString(b), hex.EncodeToString(b))
	}
	return out
}

// WantNoCanary fails t if text holds the canary in any of its forms.
func WantNoCanary(t *testing.T, where, text string) {
	t.Helper()
	for _, c := range CanaryForms() {
		if strings.Contains(text, c) {
			t.Errorf("%s contains %q", where, c)
		}
	}
}
