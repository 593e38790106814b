package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/growth"
	"github.com/arca-secrets/arca/manifest"
)

// hostile returns a config of just under size bytes: line(i) repeated,
// between head and tail.
func hostile(size int, head string, line func(i int) string, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		l := line(i)
		if b.Len()+len(l)+len(tail) > size {
			break
		}
		b.WriteString(l)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// hostileConfig is a config shaped to make a TOML decoder slow, and the
// error it gets at the largest size arca reads.
type hostileConfig struct {
	doc []byte
	err string
}

// hostileConfigs: many keys in one table, many tables, many keys in one
// inline table, long dotted keys, many unknown keys in known tables; and,
// within MaxKeys, the most siblings one table can have, the most unknown
// keys, and as many unknown keys as go-toml is left to report, each in a
// file of size bytes (the errors are those of manifest.MaxConfig).
func hostileConfigs(size int) map[string]hostileConfig {
	tooMany := "arca.toml: more than 4096 keys (a config holds at most 4096)"
	long := strings.Repeat("x", 240)
	return map[string]hostileConfig{
		"unknown keys":        {hostile(size, "", func(i int) string { return fmt.Sprintf("k%d = 1\n", i) }, ""), tooMany},
		"unknown tables":      {hostile(size, "", func(i int) string { return fmt.Sprintf("[t%d]\n", i) }, ""), tooMany},
		"inline table keys":   {hostile(size, "audit = {", func(i int) string { return fmt.Sprintf("k%d = 1, ", i) }, "z = 1}\n"), tooMany},
		"dotted keys":         {hostile(size, "", func(i int) string { return fmt.Sprintf("envs.e%d.x = 1\n", i) }, ""), tooMany},
		"unknown rule keys":   {hostile(size, "", func(i int) string { return fmt.Sprintf("[[guardrails.rule]]\nreason = \"r\"\nz%d = 1\n", i) }, ""), tooMany},
		"one long dotted key": {hostile(size, "a", func(int) string { return ".b" }, " = 1\n"), tooMany},
		"siblings at the bound": {hostile(size, "", func(i int) string {
			if i < MaxKeys {
				return fmt.Sprintf("k%d = \"%s\"\n", i, long)
			}
			return "#" + long + "\n"
		}, ""), `arca.toml:1: unknown key "k0" (and 4095 more unknown keys)`},
		"unknown keys go-toml reports": {unknownInEnvs(size, maxStrictUnknown, long),
			`arca.toml:3: unknown key "envs.e0.z" (and 7 more unknown keys)`},
		"unknown keys the scan reports": {unknownInEnvs(size, maxStrictUnknown+1, long),
			`arca.toml:3: unknown key "envs.e0.z" (and 8 more unknown keys)`},
		"known siblings at the bound": {hostile(size, "[envs]\n", func(i int) string {
			if i < MaxKeys/2-1 {
				return fmt.Sprintf("e%d.vault = \"%s\"\n", i, long)
			}
			return "#" + long + "\n"
		}, ""), `arca.toml: envs.e0.vault: no vault "` + long + `" is configured (none configured)`},
	}
}

// unknownInEnvs is n envs, each with an unknown key, in a file of size
// bytes.
func unknownInEnvs(size, n int, long string) []byte {
	return hostile(size, "", func(i int) string {
		if i < n {
			return fmt.Sprintf("[envs.e%d]\nvault = \"v\"\nz = \"%s\"\n", i, long)
		}
		return "#" + long + "\n"
	}, "")
}

// Every hostile config is refused, with the error an ordinary mistake of
// its kind gets.
func TestParseHostileConfigs(t *testing.T) {
	for name, h := range hostileConfigs(manifest.MaxConfig) {
		if len(h.doc) < manifest.MaxConfig-300 {
			t.Errorf("%s: %d bytes, want about %d", name, len(h.doc), manifest.MaxConfig)
		}
		_, err := Parse(h.doc, "arca.toml", envOf(nil))
		if err == nil || err.Error() != h.err {
			t.Errorf("%s: %v, want %s", name, err, h.err)
		}
	}
}

// Any config arca can read is accepted or refused in time linear in its
// size, in well under a second. BenchmarkLoadHostileConfigGrowth holds it
// to "linear".
func BenchmarkLoadHostileConfig(b *testing.B) {
	for name, h := range hostileConfigs(manifest.MaxConfig) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(h.doc)))
			for b.Loop() {
				Parse(h.doc, "arca.toml", envOf(nil))
			}
		})
	}
}

// BenchmarkLoadHostileConfigGrowth reads each hostile config at half the
// largest size and at the largest, in turns in one loop, and reports the
// ratio of the two: about 2 for time linear in the size (4 would be
// quadratic), about 1 where a bound (MaxKeys) stops both reads at the same
// key.
func BenchmarkLoadHostileConfigGrowth(b *testing.B) {
	half, full := hostileConfigs(manifest.MaxConfig/2), hostileConfigs(manifest.MaxConfig)
	for name := range full {
		b.Run(name, func(b *testing.B) {
			size := func(what string, doc []byte) growth.Size {
				return growth.Size{Name: what, Op: func() { Parse(doc, "arca.toml", envOf(nil)) }}
			}
			growth.Measure(b, "read", 1, size("half", half[name].doc), size("full", full[name].doc))
		})
	}
}

// A config of MaxKeys keys is read; one more key and it is refused.
func TestParseKeyBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("default_env = \"default\"\n") // 1 key
	for range (MaxKeys - 1) / 3 {
		b.WriteString("[[guardrails.rule]]\nreason = \"r\"\n") // 3 keys
	}
	c, err := Parse([]byte(b.String()), "arca.toml", envOf(nil))
	if err != nil || len(c.Guardrails.Rules) != (MaxKeys-1)/3 {
		t.Fatalf("a config of %d keys: %v", MaxKeys, err)
	}
	b.WriteString("[audit]\n")
	_, err = Parse([]byte(b.String()), "arca.toml", envOf(nil))
	if err == nil || err.Error() != "arca.toml: more than 4096 keys (a config holds at most 4096)" {
		t.Fatalf("a config of %d keys: %v", MaxKeys+1, err)
	}
}

// A message shows at most maxKeyShown bytes of a key, cut between
// characters.
func TestUnknownKeyMessageIsBounded(t *testing.T) {
	key := strings.Repeat("é", 1000)
	var many strings.Builder // reported by the scan, not go-toml
	for i := range maxStrictUnknown + 1 {
		fmt.Fprintf(&many, "\"%s%d\" = 1\n", key, i)
	}
	for _, doc := range []string{`"` + key + `" = 1` + "\n", many.String()} {
		_, err := Parse([]byte(doc), "arca.toml", envOf(nil))
		want := `arca.toml:1: unknown key "` + strings.Repeat("é", maxKeyShown/2) + `…"`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%v, want it to start %s", err, want)
		}
	}
}
