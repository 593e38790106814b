package tmpl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// valueCanary is in every value FuzzParse renders with, and must not be in
// an error unless the template holds it.
const valueCanary = "VALUE-5e1c"

// fuzzValues are the values FuzzParse renders with: every ref gets each in
// turn. The first holds a NUL, which shell refuses.
var fuzzValues = []string{
	valueCanary + "\x00'\"\\{{ arca://a/b }}}}\n\r$(x)`y`",
	valueCanary + "'\u2028é",
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "text only\n", "a {{ arca://a/b }} b\n", "{{arca://p/a/b|base64|json|shell}}",
		"{{ arca://a/b | json }}\n{{ arca://a/b | shell }}\r\n{{ arca://c/d | base64 }}",
		`{{ "{{" }} {{ "}}" }} }} {`, "{{", "{{ arca://a/b", "{{ arca://a/b\n}}", "{{}}", "{{ | }}",
		"{{ " + canary + " }}", `{{ "` + canary + `" }}`, "{{ arca://a/" + canary + "$ }}", "{{ arca://a/b " + canary + " }}",
		"{{ arca://a/b | foo }}", "{{ arca://a/b | json " + canary + " }}", "{{ ARCA://a/b }}", "{{ arca://a }}",
		"{{{ arca://a/b }}}", "é{{ x }}", "\xff", "a\n\xc3", `{{ "{{" | json }}`, `{{ "{{" "}}" }}`,
		"{{ arca://a/b || json }}", "{{\tarca://a/b\t|\tjson\t}}", "{{ arca://a/b} }}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		tp, err := Parse("f.txt", src)
		if err != nil {
			checkMessage(t, err.Error(), canary)
			return
		}
		if n := len(tp.Refs()); n > MaxRefs {
			t.Fatalf("%d refs", n)
		}
		for _, v := range fuzzValues {
			var w writes
			err := tp.Render(&w, func(ref.Ref) vault.Secret { return vault.NewSecret([]byte(v)) })
			if err != nil {
				if !bytes.Contains(src, []byte(valueCanary)) {
					checkMessage(t, err.Error(), valueCanary)
				}
				if w.n != 0 {
					t.Fatalf("%d writes before the error %q", w.n, err)
				}
				continue
			}
			if w.n != 1 {
				t.Fatalf("%d writes", w.n)
			}
			if !bytes.Contains(src, []byte("{{")) && !bytes.Equal(w.b.Bytes(), src) {
				t.Fatalf("a template without actions rendered as %q", w.b.Bytes())
			}
		}
	})
}

// checkMessage fails t unless msg is one line of printable ASCII starting
// with the name and without secret, except inside a function's quoted name.
func checkMessage(t *testing.T, msg, secret string) {
	t.Helper()
	rest := msg
	if i := strings.Index(rest, `unknown function "`); i >= 0 {
		rest = rest[:i]
	}
	if !strings.HasPrefix(msg, "f.txt:") || strings.Contains(rest, secret) || len(msg) > 400 ||
		strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 || r >= 0x7f }) >= 0 {
		t.Fatalf("error %q", msg)
	}
}
