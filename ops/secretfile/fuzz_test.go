package secretfile

import (
	"os"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
)

// fuzzParse fuzzes Parse in format: it must not panic, a result must keep
// every bound checkResult checks, and an error must be one short ASCII line
// without the canary (the seeds carry it in their values).
func fuzzParse(f *testing.F, format string, o Options, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, shape, err := Parse(data, format, o)
		if err == nil {
			checkResult(t, es, shape)
			return
		}
		msg := err.Error()
		if es != nil || strings.Contains(msg, canary) || strings.Contains(msg, "CANARY") || strings.Contains(msg, "7f3a") || strings.ContainsAny(msg, "\n\r") || len(msg) > 2048 || strings.IndexFunc(msg, func(r rune) bool { return r >= 0x80 || r < 0x20 }) >= 0 {
			t.Fatalf("entries %d, error %q", len(es), msg)
		}
	})
}

// cn is short for the canary in seeds.
const cn = canary

func FuzzParseDotenv(f *testing.F) {
	fuzzParse(f, "dotenv", Options{},
		"A="+cn+"\nexport B = '"+cn+"' # c\nC=\""+cn+"\\n\\$\\q\"\r\n# c\n\nD=x #c\n",
		"A='"+cn+"\n", "A=\""+cn+"\\\"\n", "A='"+cn+"' x\n", "MY KEY="+cn+"\n", "KEY: "+cn+"==\n", `"k": "`+cn+`=="`,
		"A="+cn+"\nA="+cn+"\n", cn+"\n", "A="+cn+"\xff\n", "\xef\xbb\xbfA="+cn+"\r", "=x\n", "A=\"a\r\nb\"\n")
}

// FuzzParseDotenvExpand: expansion ends, stays within manifest.MaxValue,
// and its errors never hold what a variable of the environment holds (a
// text with spaces, which no key can be) nor a line break.
func FuzzParseDotenvExpand(f *testing.F) {
	const envSecret = "env secret Zq"
	lookup := func(name string) (string, bool) {
		if name == "SECRET" {
			return envSecret, true
		}
		return "", name == "EMPTY"
	}
	for _, s := range []string{
		"A=x\nB=${A}$A${SECRET}\nC=\"${NOPE:-$A}\\$A\"\nD='${A}'\n", "A=${SECRET\n", "A=${A\n", "A=$SECRET$NOPE\n",
		"A=${EMPTY-x}${EMPTY:-y}${NOPE-}\n", "A=${X:?m}$SECRET\n", "A=$SECRET\nB=${A}${A}${A}${A}\nC=${B}${B}${B}${B}\n", "A=$$x \\$ $\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, _, err := Parse(data, "dotenv", Options{Expand: true, Lookup: lookup})
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, envSecret) || strings.ContainsAny(msg, "\n\r") || len(msg) > 2048 {
				t.Fatalf("error %q", msg)
			}
			return
		}
		for _, e := range es {
			if e.Value.Len() > manifest.MaxValue || e.Refs {
				t.Fatalf("%s: %d bytes, Refs %v", e.Name, e.Value.Len(), e.Refs)
			}
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	fuzzParse(f, "json", Options{},
		`{"a":"`+cn+`","b":5432,"c":true}`, `{"app":{"db":"`+cn+`"},"web":{}}`, `{"a":"`+cn+`","a":"x"}`,
		`{"a":"\ud800`+cn+`"}`, `{"a":null}`, `{"n":{"a":{"b":"`+cn+`"}}}`, `{"a":"`+cn+`"} x`, `["`+cn+`"]`,
		`{"MY KEY":"`+cn+`"}`, `{"a":"`+cn+"\xff"+`"}`, `{"a":"\ud83d\ude00 \u00e9 \n"}`, `{"a":1,"n":{}}`, "本")
}

func FuzzParseYAML(f *testing.F) {
	fuzzParse(f, "yaml", Options{},
		"a: "+cn+"\nport: 5432\nb: |\n  "+cn+"\n  x\n", "app:\n  db: "+cn+"\nweb: {}\n", "a: &x "+cn+"\nb: *x\n",
		"a: !!binary "+cn+"\n", "<<: {a: "+cn+"}\n", "a: "+cn+"\n---\nb: 1\n", "a: ["+cn+"\n", "a: \""+cn+"\\q\"\n",
		"a:\n  - "+cn+"\n", "a: "+cn+"\na: x\n", "? [a]\n: "+cn+"\n", "a: *"+cn+"\n", "a: '"+cn+"'\n\tb: 1\n", "&-0")
}

func FuzzParseVaultKV(f *testing.F) {
	fuzzParse(f, "vault-kv", Options{},
		strings.ReplaceAll(kvV2, "hunter2", cn), strings.ReplaceAll(kvV1, "hunter2", cn),
		`{"data":{"data":{"a":"`+cn+`"},"metadata":{},"x":1}}`, `{"data":{"a":"`+cn+`","metadata":{}}}`,
		`{"request_id":"`+cn+`"}`, `{"data":{"data":{"a":null},"metadata":null}}`, "本")
}

func FuzzParseArenzana(f *testing.F) {
	store, err := os.ReadFile(peerDir + "store.json")
	if err != nil {
		f.Fatal(err)
	}
	key, err := os.ReadFile(peerDir + "identity.txt")
	if err != nil {
		f.Fatal(err)
	}
	ids, err := age.ParseIdentities(strings.NewReader(string(key)))
	if err != nil {
		f.Fatal(err)
	}
	fuzzParse(f, "arenzana", Options{Identities: ids}, string(store),
		`{"version":1,"secrets":{"A":{"value":"`+cn+`"}}}`, `{"version":2,"secrets":{"A":{"value":"x"}}}`,
		`{"version":1,"secrets":{"A":{"value":"-----BEGIN AGE ENCRYPTED FILE-----\n`+cn+`\n-----END AGE ENCRYPTED FILE-----\n"}}}`)
}
