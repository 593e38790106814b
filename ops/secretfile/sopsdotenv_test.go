package secretfile

import "testing"

// What sops -d prints for a .env file: values as they are (spaces, # and
// quotes included), newlines written \n.
func TestSopsDotenv(t *testing.T) {
	es, shape, err := Parse([]byte("# sops keeps comments\nTLS_KEY=-----BEGIN KEY-----\\nMIIB\\n-----END KEY-----\nDB_PASS= pa ss #1 \n\nQUOTED=\"as is\"\r\n"), "sops-dotenv", Options{})
	if err != nil || shape != Flat {
		t.Fatal(err, shape)
	}
	want := []kv{{"", "TLS_KEY", "-----BEGIN KEY-----\nMIIB\n-----END KEY-----", "line 2"}, {"", "DB_PASS", " pa ss #1 ", "line 3"}, {"", "QUOTED", `"as is"`, "line 5"}}
	if got := plain(es); len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, w := range want {
		if es[i].Name != w.name || string(es[i].Value.Reveal()) != w.value || es[i].Where != w.where {
			t.Errorf("entry %d: %s=%q at %s, want %s=%q at %s", i, es[i].Name, es[i].Value.Reveal(), es[i].Where, w.name, w.value, w.where)
		}
	}
	for in, msg := range map[string]string{
		"A=1\nno equals " + canary + "\n": "line 2: not an assignment NAME=value, a comment or a blank line",
		"A=1\nA=" + canary + "\n":         "line 2: A is also set on line 1",
		"MY KEY=" + canary + "\n":         "line 1: the name before = is not a valid name: has a character outside [A-Za-z0-9._-]: ' '",
		"A=\xff" + canary + "\n":          "line 1: A: the value is not valid UTF-8",
	} {
		_, _, err := Parse([]byte(in), "sops-dotenv", Options{})
		if err == nil || err.Error() != msg {
			t.Errorf("%q: err %v, want %q", in, err, msg)
		}
		noCanary(t, err)
	}
}
