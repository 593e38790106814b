package secretfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/arca-secrets/arca/manifest"
)

const peerDir = "testdata/arenzana-arca-v0.11.0/"

func peerIdentity(t *testing.T) []age.Identity {
	t.Helper()
	f, err := os.Open(peerDir + "identity.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The store the peer's own binary wrote opens to the values SOURCE.md gives.
func TestArenzanaPeerStore(t *testing.T) {
	data, err := os.ReadFile(peerDir + "store.json")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	for _, ids := range [][]age.Identity{peerIdentity(t), append([]age.Identity{other}, peerIdentity(t)...)} {
		es, shape, err := Parse(data, "arenzana", Options{Identities: ids})
		if err != nil {
			t.Fatal(err)
		}
		want := []kv{
			{"", "DB_PASSWORD", "hunter2", `secret "DB_PASSWORD"`},
			{"", "MULTI_LINE", "line one\nline two", `secret "MULTI_LINE"`},
			{"", "STRIPE_KEY", "sk_live_1234567890", `secret "STRIPE_KEY"`},
			{"", "TRICKY", "quote\" back\\slash $(not run) `tick` \u00e9 \u65e5\u672c", `secret "TRICKY"`},
		}
		if got := plain(es); fmt.Sprint(got) != fmt.Sprint(want) || shape != Flat {
			t.Fatalf("got %v %v\nwant %v", shape, got, want)
		}
	}
	parseErr(t, "arenzana", string(data), `secret "DB_PASSWORD": cannot decrypt with the given identity`, Options{Identities: []age.Identity{other}})
	parseErr(t, "arenzana", string(data), "an arenzana/arca store is encrypted: give the age identity that opens it (--identity)", Options{})
}

// seal encrypts value to id as the peer does (armored age).
func seal(t *testing.T, id *age.X25519Identity, value []byte) string {
	t.Helper()
	var b bytes.Buffer
	aw := armor.NewWriter(&b)
	w, err := age.Encrypt(aw, id.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(value); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestArenzanaMade(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	o := Options{Identities: []age.Identity{id}}
	ok := jsonString(seal(t, id, []byte(canary)))
	store := func(secrets string) string {
		return `{"version":1,"generation":2,"recipients":["` + id.Recipient().String() + `"],"secrets":{` + secrets + `}}`
	}
	t.Run("unknown fields are ignored", func(t *testing.T) {
		in := `{"future":{"x":[1]},"secrets":{"A":{"value":` + ok + `,"meta":{"k":"v"},"expires_at":"2030-01-01T00:00:00Z","no_print":true,"tags":["t"]}},"version":1}`
		es, _, err := Parse([]byte(in), "arenzana", o)
		if err != nil || len(es) != 1 || string(es[0].Value.Reveal()) != canary || es[0].Name != "A" {
			t.Fatalf("%v, %v", plain(es), err)
		}
	})
	for _, in := range []string{`{"version":1}`, `{"version":1,"secrets":null}`, store("")} {
		es, _, err := Parse([]byte(in), "arenzana", Options{})
		if err != nil || len(es) != 0 {
			t.Errorf("%s: %v, %v", in, plain(es), err)
		}
	}
	tampered := []byte(seal(t, id, []byte(canary)))
	tampered[len(tampered)-40] ^= 1 // inside the armored payload
	tests := []struct{ name, in, msg string }{
		{"version 2", `{"version":2,"secrets":{"A":{"value":` + ok + `}}}`, "line 1: the version is 2 (want 1)"},
		{"version 1.0", "{\n\"version\":1.0}", "line 2: the version is 1.0 (want 1)"},
		{"version a string", `{"version":"1"}`, "line 1: the version is a string (want 1)"},
		{"long version", `{"version":` + strings.Repeat("9", 30) + `}`, "line 1: the version is a number of 30 digits (want 1)"},
		{"no version", `{"secrets":{"A":{"value":` + ok + `}}}`, `no "version": not an arenzana/arca store`},
		{"secrets an array", `{"version":1,"secrets":[` + ok + `]}`, `line 1: key "secrets" is an array (want an object)`},
		{"secret null", store(`"A":null`), `line 1: secret "A" is null (want an object)`},
		{"secret a string", store(`"A":` + ok), `line 1: secret "A" is a string (want an object)`},
		{"no value", store(`"A":{"tags":["` + canary + `"]}`), `line 1: secret "A" has no value`},
		{"value a number", store(`"A":{"value":5}`), `line 1: secret "A": the value is a number (want an age ciphertext)`},
		{"bad name", store(`"MY KEY":{"value":` + ok + `}`), `line 1: secret "MY KEY" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"duplicate", "{\"version\":1,\"secrets\":{\"A\":{\"value\":" + ok + "},\n\"A\":{\"value\":" + ok + "}}}", `line 2: key "secrets"."A" is also set on line 1`},
		{"duplicate value field", store(`"A":{"value":` + ok + `,"value":` + ok + `}`), `line 1: key "secrets"."A"."value" is also set on line 1`},
		{"plaintext as value", store(`"A":{"value":"` + canary + `"}`), `secret "A": cannot decrypt: the value is not an armored age ciphertext, or its header is damaged`},
		{"binary age as value", store(`"A":{"value":"age-encryption.org/v1\n-> X25519 ` + canary + `\n"}`), `secret "A": cannot decrypt: the value is not an armored age ciphertext, or its header is damaged`},
		{"tampered", store(`"B":{"value":` + ok + `},"A":{"value":` + jsonString(string(tampered)) + `}`), `secret "A": cannot decrypt: the ciphertext is damaged (it does not authenticate)`},
		{"too large", store(`"A":{"value":` + jsonString(seal(t, id, bytes.Repeat([]byte("x"), manifest.MaxValue+1))) + `}`), `secret "A": the value is larger than 65536 bytes (64 KiB)`},
		{"not UTF-8", store(`"A":{"value":` + jsonString(seal(t, id, []byte(canary+"\xff"))) + `}`), `secret "A": the value is not valid UTF-8`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parseErr(t, "arenzana", tc.in, tc.msg, o)
		})
	}
	// At the bound: a value of exactly MaxValue bytes opens.
	in := store(`"A":{"value":` + jsonString(seal(t, id, bytes.Repeat([]byte("x"), manifest.MaxValue))) + `}`)
	if es, _, err := Parse([]byte(in), "arenzana", o); err != nil || es[0].Value.Len() != manifest.MaxValue {
		t.Fatalf("%v", err)
	}
}

func TestArenzanaMaxEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version":1,"secrets":{`)
	for i := range MaxEntries + 1 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `"K%d":{"value":"x"}`, i)
	}
	b.WriteString("}}")
	parseErr(t, "arenzana", b.String(), "line 100001: more than 100000 entries", Options{})
}
