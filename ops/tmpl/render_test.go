package tmpl

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// canary is a value tests look for in errors.
const canary = "CANARY-7f3a9"

// writes counts the calls to Write, and fails them with err when set.
type writes struct {
	n   int
	b   bytes.Buffer
	err error
}

func (w *writes) Write(p []byte) (int, error) {
	w.n++
	if w.err != nil {
		return 0, w.err
	}
	return w.b.Write(p)
}

func TestKubernetesSecret(t *testing.T) {
	const src = `apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
data:
  password: {{ arca://db/pw | base64 }}
  pinned: {{ arca://prod/db/pw | base64 }}
stringData:
  dsn: {{ arca://db/dsn | json }}
`
	m := map[string]string{
		"arca://db/pw":      "p@ss: 'w\"rd'\n{{ x }} # not a comment\x00\t\u2028é",
		"arca://prod/db/pw": "",
		"arca://db/dsn":     `postgres://u:p@h/db?x=1#frag {"a": [1]} \ 'q' "dq"` + "\n- item",
	}
	out, err := render(t, src, m)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   map[string]string `yaml:"metadata"`
		Type       string            `yaml:"type"`
		Data       map[string]string `yaml:"data"`
		StringData map[string]string `yaml:"stringData"`
	}
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("the manifest is not YAML: %v\n%s", err, out)
	}
	if doc.APIVersion != "v1" || doc.Kind != "Secret" || doc.Metadata["name"] != "db" || doc.Type != "Opaque" {
		t.Fatalf("manifest %+v", doc)
	}
	for key, r := range map[string]string{"password": "arca://db/pw", "pinned": "arca://prod/db/pw"} {
		got, err := base64.StdEncoding.DecodeString(doc.Data[key])
		if err != nil || string(got) != m[r] {
			t.Errorf("data.%s decodes to %q, %v; want %q", key, got, err, m[r])
		}
	}
	if got := doc.StringData["dsn"]; got != m["arca://db/dsn"] {
		t.Errorf("stringData.dsn = %q, want %q", got, m["arca://db/dsn"])
	}
}

func TestRenderErrors(t *testing.T) {
	nul := canary + "\x00" + canary
	tests := []struct {
		name, src, value, msg string
	}{
		{"shell of a NUL", "a\n  x={{ arca://prod/db/pw | shell }}", nul, "t.txt:2:5: arca://prod/db/pw: shell cannot quote a value holding a NUL byte"},
		{"shell after other filters", "{{ arca://db/pw | base64 }}{{ arca://db/pw | shell | json }}", nul, "t.txt:1:28: arca://db/pw: shell cannot quote a value holding a NUL byte"},
		{"shell of a lone NUL", "{{ arca://db/pw | shell }}", "\x00", "t.txt:1:1: arca://db/pw: shell cannot quote a value holding a NUL byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := Parse("t.txt", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			var w writes
			err = tp.Render(&w, func(ref.Ref) vault.Secret { return vault.NewSecret([]byte(tc.value)) })
			if err == nil || err.Error() != tc.msg {
				t.Fatalf("error %v, want %s", err, tc.msg)
			}
			if w.n != 0 {
				t.Fatalf("%d writes before the error", w.n)
			}
		})
	}
}

func TestNULThroughOtherFilters(t *testing.T) {
	m := map[string]string{"arca://db/pw": "a\x00b"}
	got, err := render(t, "{{ arca://db/pw | json | shell }} {{ arca://db/pw | base64 | shell }} {{ arca://db/pw }}", m)
	if want := `'"a\u0000b"' 'YQBi' a` + "\x00b"; err != nil || got != want {
		t.Fatalf("Render = %q, %v; want %q", got, err, want)
	}
}

func TestOneWrite(t *testing.T) {
	tp, err := Parse("t.txt", []byte(strings.Repeat("text {{ arca://a/b }} {{ arca://a/b | json }}\n", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	var w writes
	if err := tp.Render(&w, values(t, map[string]string{"arca://a/b": "v"})); err != nil {
		t.Fatal(err)
	}
	if w.n != 1 || w.b.Len() != 1000*len("text v \"v\"\n") {
		t.Fatalf("%d writes, %d bytes", w.n, w.b.Len())
	}
}

func TestWriteError(t *testing.T) {
	tp, err := Parse("out/t.txt", []byte("{{ arca://a/b }}"))
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err = tp.Render(&writes{err: boom}, values(t, map[string]string{"arca://a/b": canary}))
	if err == nil || err.Error() != "out/t.txt: writing the output: disk full" || !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
}

func TestMaxOutput(t *testing.T) {
	const valueLen = 64 << 10 // manifest.MaxValue
	value := strings.Repeat("'", valueLen)
	m := map[string]string{"arca://a/b": value}
	exact := strings.Repeat("{{ arca://a/b }}", MaxOutput/valueLen)
	tp, err := Parse("t.txt", []byte(exact))
	if err != nil {
		t.Fatal(err)
	}
	var w writes
	if err := tp.Render(&w, values(t, m)); err != nil || w.b.Len() != MaxOutput {
		t.Fatalf("at the bound: %d bytes, %v", w.b.Len(), err)
	}
	tests := []struct{ name, src, msg string }{
		{"a byte of text over", exact + "!", "t.txt:1:16369: arca://a/b: the output would be larger than 67108864 bytes (64 MiB)"},
		{"a filter over", exact[16:] + "{{ arca://a/b | json }}", "t.txt:1:16369: arca://a/b: the output would be larger than 67108864 bytes (64 MiB)"},
		{"a chain that quadruples", "{{ arca://a/b" + strings.Repeat(" | shell", MaxFilters) + " }}", "t.txt:1:1: arca://a/b: the output would be larger than 67108864 bytes (64 MiB)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := Parse("t.txt", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			var w writes
			err = tp.Render(&w, values(t, m))
			if err == nil || err.Error() != tc.msg {
				t.Fatalf("error %v, want %s", err, tc.msg)
			}
			if w.n != 0 {
				t.Fatalf("%d writes before the error", w.n)
			}
		})
	}
}

// TestJSONIsNotYAML holds what the package doc says of json in YAML.
func TestJSONIsNotYAML(t *testing.T) {
	for _, v := range []string{"a\x7fb", "a\u0080b", "a\u009fb", "a\ufffeb", "a\u0085b"} {
		var doc map[string]string
		err := yaml.Unmarshal(append([]byte("k: "), appendJSON(nil, []byte(v))...), &doc)
		if err == nil && doc["k"] == v {
			t.Errorf("YAML read %q through json as it is; the package doc says it does not", v)
		}
	}
}
