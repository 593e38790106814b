package tmpl

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// values returns a value function that looks refs up in m, by the ref as
// written, and fails the test for a ref m lacks.
func values(t testing.TB, m map[string]string) func(ref.Ref) vault.Secret {
	return func(r ref.Ref) vault.Secret {
		v, ok := m[refText(r)]
		if !ok {
			t.Fatalf("value asked for %s, which the test has not", refText(r))
		}
		return vault.NewSecret([]byte(v))
	}
}

// render parses src as "t.txt" and renders it with m.
func render(t testing.TB, src string, m map[string]string) (string, error) {
	t.Helper()
	tp, err := Parse("t.txt", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var b bytes.Buffer
	err = tp.Render(&b, values(t, m))
	return b.String(), err
}

// refTexts writes refs as written.
func refTexts(refs []ref.Ref) []string {
	var s []string
	for _, r := range refs {
		s = append(s, refText(r))
	}
	return s
}

func TestForms(t *testing.T) {
	m := map[string]string{
		"arca://db/pw":      "s3cr&t<>",
		"arca://prod/db/pw": "prod'pw",
		"arca://a/b":        "x",
	}
	tests := []struct {
		name, src, want string
		refs            []string
	}{
		{"empty", "", "", nil},
		{"text only", "a: 1\nb: {x}\n", "a: 1\nb: {x}\n", nil},
		{"bare", "pw={{ arca://db/pw }}\n", "pw=s3cr&t<>\n", []string{"arca://db/pw"}},
		{"no spaces", "{{arca://db/pw}}", "s3cr&t<>", []string{"arca://db/pw"}},
		{"tabs and many spaces", "{{\t  arca://db/pw \t }}", "s3cr&t<>", []string{"arca://db/pw"}},
		{"env pin", "{{ arca://prod/db/pw }}", "prod'pw", []string{"arca://prod/db/pw"}},
		{"pin and no pin are two refs", "{{ arca://db/pw }} {{ arca://prod/db/pw }} {{ arca://db/pw }}", "s3cr&t<> prod'pw s3cr&t<>", []string{"arca://db/pw", "arca://prod/db/pw"}},
		{"order of first appearance", "{{ arca://a/b }}{{ arca://db/pw }}{{ arca://a/b }}", "xs3cr&t<>x", []string{"arca://a/b", "arca://db/pw"}},
		{"base64", "{{ arca://db/pw | base64 }}", "czNjciZ0PD4=", []string{"arca://db/pw"}},
		{"json keeps <>&", "{{ arca://db/pw | json }}", `"s3cr&t<>"`, []string{"arca://db/pw"}},
		{"shell", "{{ arca://prod/db/pw | shell }}", `'prod'\''pw'`, []string{"arca://prod/db/pw"}},
		{"no spaces around |", "{{arca://db/pw|base64|json}}", `"czNjciZ0PD4="`, []string{"arca://db/pw"}},
		{"base64 then json", "{{ arca://db/pw | base64 | json }}", `"czNjciZ0PD4="`, []string{"arca://db/pw"}},
		{"json then shell", "{{ arca://prod/db/pw | json | shell }}", `'"prod'\''pw"'`, []string{"arca://prod/db/pw"}},
		{"shell then json", "{{ arca://prod/db/pw | shell | json }}", `"'prod'\\''pw'"`, []string{"arca://prod/db/pw"}},
		{"same filter twice", "{{ arca://a/b | base64 | base64 }}", "ZUE9PQ==", []string{"arca://a/b"}},
		{"literal open", `{{ "{{" }}`, "{{", nil},
		{"literal close", `{{ "}}" }}`, "}}", nil},
		{"literals without spaces", `{{"{{"}}x{{"}}"}}`, "{{x}}", nil},
		{"literal around a ref", `{{ "{{" }} arca://a/b {{ "}}" }} = {{ arca://a/b }}`, "{{ arca://a/b }} = x", []string{"arca://a/b"}},
		{"}} outside an action", "a }} b } c {", "a }} b } c {", nil},
		{"extra } after an action", "{{ arca://a/b }}}", "x}", []string{"arca://a/b"}},
		{"CRLF", "a={{ arca://a/b }}\r\nb={{ arca://a/b | json }}\r\n", "a=x\r\nb=\"x\"\r\n", []string{"arca://a/b"}},
		{"unicode text", "é 日本 🙂 {{ arca://a/b }} ü", "é 日本 🙂 x ü", []string{"arca://a/b"}},
		{"byte order mark kept", "\ufeff{{ arca://a/b }}", "\ufeffx", []string{"arca://a/b"}},
		{"NUL in text", "a\x00{{ arca://a/b }}\x00", "a\x00x\x00", []string{"arca://a/b"}},
		{"text/template syntax is text when outside braces", "{ .Values.x } {{ arca://a/b }}", "{ .Values.x } x", []string{"arca://a/b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := Parse("t.txt", []byte(tc.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := refTexts(tp.Refs()); !slices.Equal(got, tc.refs) {
				t.Errorf("Refs() = %q, want %q", got, tc.refs)
			}
			var b bytes.Buffer
			if err := tp.Render(&b, values(t, m)); err != nil {
				t.Fatalf("Render: %v", err)
			}
			if b.String() != tc.want {
				t.Errorf("Render = %q, want %q", b.String(), tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("f", 100)
	tests := []struct {
		name, src, msg string
	}{
		{"not closed", "a {{ arca://a/b", "t.txt:1:3: {{ not closed"},
		{"not closed, bare", "{{", "t.txt:1:1: {{ not closed"},
		{"not closed after |", "{{ arca://a/b |", "t.txt:1:1: {{ not closed"},
		{"not closed after a literal", `{{ "{{"`, "t.txt:1:1: {{ not closed"},
		{"newline inside", "x\ny {{ arca://a/b\n}}", "t.txt:2:3: newline inside an action"},
		{"newline before the body", "{{\narca://a/b }}", "t.txt:1:1: newline inside an action"},
		{"newline after |", "{{ arca://a/b | \njson }}", "t.txt:1:1: newline inside an action"},
		{"newline after a literal", "{{ \"}}\" \n}}", "t.txt:1:1: newline inside an action"},
		{"CR is not a newline", "{{ arca://a/b\r\n", "t.txt:1:1: invalid ref: segment 2 (name) has a control character"},
		{"empty", "{{}}", "t.txt:1:1: empty action"},
		{"empty with spaces", "a\n\t{{ \t }}", "t.txt:2:2: empty action"},
		{"unknown function", "{{ arca://a/b | foo }}", `t.txt:1:1: unknown function "foo"`},
		{"unknown function after a known one", "{{ arca://a/b | json | Base64 }}", `t.txt:1:1: unknown function "Base64"`},
		{"function name cut to 64 bytes", "{{ arca://a/b | " + long + " }}", `t.txt:1:1: unknown function "` + long[:64] + `"`},
		{"function name in printable ASCII", "{{ arca://a/b | é\x01\"\\ }}", `t.txt:1:1: unknown function "\u00e9\x01\"\\"`},
		{"function name cut at a rune", "{{ arca://a/b | " + long[:63] + "é }}", `t.txt:1:1: unknown function "` + long[:63] + `"`},
		{"text/template function", "{{ arca://a/b | printf }}", `t.txt:1:1: unknown function "printf"`},
		{"MaxFilters functions", "{{ arca://a/b" + strings.Repeat(" | json", MaxFilters) + " | nope }}", `t.txt:1:1: unknown function "nope"`},
		{"more than MaxFilters functions", "{{ arca://a/b" + strings.Repeat(" | json", MaxFilters) + " | json }}", "t.txt:1:1: more than 8 functions in one action"},
		{"missing function", "{{ arca://a/b | }}", `t.txt:1:1: expected a function after "|"`},
		{"double pipe", "{{ arca://a/b || json }}", `t.txt:1:1: expected a function after "|"`},
		{"two refs", "{{ arca://a/b arca://c/d }}", `t.txt:1:1: expected "|" or "}}" after the ref`},
		{"word after a function", "{{ arca://a/b | json shell }}", `t.txt:1:1: expected "|" or "}}" after "json"`},
		{"quote after the ref", `{{ arca://a/b "}}" }}`, `t.txt:1:1: expected "|" or "}}" after the ref`},
		{"1Password ref", "{{ op://vault/item/field }}", `t.txt:1:1: a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)`},
		{"1Password ref, upper case", "x\n  {{OP://v/i/f | base64}}", `t.txt:2:3: a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)`},
		{"bare word", "{{ hunter2 }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"text/template field", "{{ .Values.password }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"text/template if", "{{ if arca://a/b }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"pipe first", "{{ | json }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"triple brace", "{{{ arca://a/b }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"other scheme", "{{ vault://a/b }}", `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"invalid ref", "{{ arca://a }}", "t.txt:1:1: invalid ref: 1 segment, want ns/name or env/ns/name"},
		{"upper-case scheme", "{{ ARCA://a/b }}", `t.txt:1:1: invalid ref: scheme must be lower-case "arca://"`},
		{"one slash", "{{ arca:/a/b }}", `t.txt:1:1: invalid ref: must start with "arca://"`},
		{"bad segment", "{{ arca://a/b$c }}", `t.txt:1:1: invalid ref: segment 2 (name) has a character outside [A-Za-z0-9._-]: '$'`},
		{"single } in the ref", "{{ arca://a/b} }}", `t.txt:1:1: invalid ref: segment 2 (name) has a character outside [A-Za-z0-9._-]: '}'`},
		{"four segments", "{{ arca://a/b/c/d }}", "t.txt:1:1: invalid ref: 4 segments, want ns/name or env/ns/name"},
		{"ref over 1 KiB", "{{ arca://a/" + strings.Repeat("b", 1100) + " }}", "t.txt:1:1: invalid ref: longer than 1024 bytes"},
		{"other literal", `{{ "x" }}`, `t.txt:1:1: a quoted literal must be "{{" or "}}"`},
		{"empty literal", `{{ "" }}`, `t.txt:1:1: a quoted literal must be "{{" or "}}"`},
		{"unclosed literal", `{{ "{{ }}`, `t.txt:1:1: a quoted literal must be "{{" or "}}"`},
		{"escaped literal", `{{ "\"" }}`, `t.txt:1:1: a quoted literal must be "{{" or "}}"`},
		{"single-quoted literal", `{{ '{{' }}`, `t.txt:1:1: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"literal with a filter", `{{ "{{" | json }}`, "t.txt:1:1: a quoted literal takes no function"},
		{"literal and more", `{{ "{{" "}}" }}`, `t.txt:1:1: expected "}}" after the quoted literal`},
		{"second action's column", "ok {{ arca://a/b }} {{ nope }}", `t.txt:1:21: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"column counts bytes", "é{{ nope }}", `t.txt:1:3: expected a ref (arca://ns/name) or a quoted literal ("{{" or "}}")`},
		{"line after literal text", "{{ \"{{\" }}\n\n{{}}", "t.txt:3:1: empty action"},
		{"not UTF-8", "ok\nok \xff\n", "t.txt:2:4: not valid UTF-8"},
		{"not UTF-8 in an action", "{{ arca://a/\xc3 }}", "t.txt:1:13: not valid UTF-8"},
		{"surrogate half", "\n\n\xed\xa0\x80", "t.txt:3:1: not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := Parse("t.txt", []byte(tc.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %q", refTexts(tp.Refs()))
			}
			if err.Error() != tc.msg {
				t.Fatalf("error\n %s\nwant\n %s", err, tc.msg)
			}
			if tp != nil {
				t.Fatalf("a template with the error")
			}
		})
	}
}

func TestMaxTemplate(t *testing.T) {
	at := bytes.Repeat([]byte("x"), MaxTemplate)
	if _, err := Parse("big.txt", at); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	_, err := Parse("big.txt", append(at, 'x'))
	if want := "big.txt: the template is larger than 1048576 bytes (1 MiB)"; err == nil || err.Error() != want {
		t.Fatalf("over the bound: %v, want %s", err, want)
	}
}

func TestMaxRefs(t *testing.T) {
	var b strings.Builder
	for i := range MaxRefs {
		b.WriteString("{{ arca://n/s" + strconv.Itoa(i) + " }}{{ arca://n/s0 }}\n")
	}
	tp, err := Parse("refs.txt", []byte(b.String()))
	if err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	if n := len(tp.Refs()); n != MaxRefs {
		t.Fatalf("%d refs, want %d", n, MaxRefs)
	}
	b.WriteString("{{ arca://n/s1 }} {{ arca://n/one-more }}\n")
	_, err = Parse("refs.txt", []byte(b.String()))
	if want := "refs.txt:10001:19: more than 10000 distinct refs"; err == nil || err.Error() != want {
		t.Fatalf("over the bound: %v, want %s", err, want)
	}
}

func TestRefsIsACopy(t *testing.T) {
	tp, err := Parse("t.txt", []byte("{{ arca://a/b }}{{ arca://prod/c/d }}"))
	if err != nil {
		t.Fatal(err)
	}
	rs := tp.Refs()
	rs[0] = ref.Ref{}
	if got := refTexts(tp.Refs()); !slices.Equal(got, []string{"arca://a/b", "arca://prod/c/d"}) {
		t.Fatalf("Refs() = %q after the caller changed its copy", got)
	}
	if r := tp.Refs()[1]; r.Env != "prod" || r.NS != "c" || r.Name != "d" {
		t.Fatalf("pinned ref = %+v", r)
	}
	if tp.Name() != "t.txt" {
		t.Fatalf("Name() = %q", tp.Name())
	}
}

func TestSrcNotKept(t *testing.T) {
	src := []byte("a {{ arca://a/b }} b")
	tp, err := Parse("t.txt", src)
	if err != nil {
		t.Fatal(err)
	}
	copy(src, "XXXXXXXXXXXXXXXXXXXX")
	var b bytes.Buffer
	if err := tp.Render(&b, values(t, map[string]string{"arca://a/b": "v"})); err != nil || b.String() != "a v b" {
		t.Fatalf("Render = %q, %v after src changed", b.String(), err)
	}
}

func TestValueCalledOncePerRef(t *testing.T) {
	tp, err := Parse("t.txt", []byte("{{ arca://a/b }}{{ arca://c/d | json }}{{ arca://a/b | shell }}{{ arca://c/d }}"))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	err = tp.Render(&bytes.Buffer{}, func(r ref.Ref) vault.Secret {
		asked = append(asked, refText(r))
		return vault.NewSecret([]byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"arca://a/b", "arca://c/d"}; !slices.Equal(asked, want) {
		t.Fatalf("value asked for %q, want %q", asked, want)
	}
}

func TestRenderTwice(t *testing.T) {
	tp, err := Parse("t.txt", []byte("<{{ arca://a/b | base64 | json | shell }}|{{ arca://a/b | json | json }}>"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"first value", "2", ""} {
		var b bytes.Buffer
		if err := tp.Render(&b, values(t, map[string]string{"arca://a/b": v})); err != nil {
			t.Fatal(err)
		}
		want := "<" + string(shellFilter.append(nil, jsonFilter.append(nil, base64Filter.append(nil, []byte(v))))) + "|" +
			string(jsonFilter.append(nil, jsonFilter.append(nil, []byte(v)))) + ">"
		if b.String() != want {
			t.Fatalf("Render = %q, want %q", b.String(), want)
		}
	}
}

func TestZeroSecretIsEmpty(t *testing.T) {
	tp, err := Parse("t.txt", []byte("[{{ arca://a/b }}][{{ arca://a/b | json }}][{{ arca://a/b | shell }}][{{ arca://a/b | base64 }}]"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tp.Render(&b, func(ref.Ref) vault.Secret { return vault.Secret{} }); err != nil {
		t.Fatal(err)
	}
	if want := `[][""][''][]`; b.String() != want {
		t.Fatalf("Render = %q, want %q", b.String(), want)
	}
}

func TestRenderConcurrently(t *testing.T) {
	tp, err := Parse("t.txt", []byte("{{ arca://a/b | base64 | json }} {{ arca://c/d | shell | json }}\n"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	for i := range 8 {
		go func() {
			v := strconv.Itoa(i)
			var b bytes.Buffer
			_ = tp.Render(&b, func(ref.Ref) vault.Secret { return vault.NewSecret([]byte(v)) })
			done <- v + ":" + b.String()
		}()
	}
	for range 8 {
		got := <-done
		v, out, _ := strings.Cut(got, ":")
		want := string(jsonFilter.append(nil, base64Filter.append(nil, []byte(v)))) + " " + `"'` + v + `'"` + "\n"
		if out != want {
			t.Errorf("render with %s: %q, want %q", v, out, want)
		}
	}
}

// Where names the first action of a ref, line and byte column of its
// "{{", as Parse's errors do; a ref the template does not name has none,
// and a pinned ref is not its unpinned twin.
func TestWhere(t *testing.T) {
	tp, err := Parse("dir/app.tmpl", []byte("# é head\nx={{ \"{{\" }} {{ arca://a/b | json }}\n\ty={{arca://prod/c/d}} {{ arca://a/b }}\n"))
	if err != nil {
		t.Fatal(err)
	}
	refs := tp.Refs()
	for i, want := range []string{"dir/app.tmpl:2:14", "dir/app.tmpl:3:4"} {
		if got, ok := tp.Where(refs[i]); !ok || got != want {
			t.Errorf("Where(%s) = %q, %v; want %q", refText(refs[i]), got, ok, want)
		}
	}
	cd, _ := ref.Parse("arca://c/d")
	if got, ok := tp.Where(cd); ok || got != "" {
		t.Fatalf("Where of a ref not named = %q, %v", got, ok)
	}
}
