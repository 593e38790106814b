package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/plugin"
)

// testPluginName is the age plugin this test binary is, as
// age-plugin-arcatest (main_test.go): a stand-in for a hardware key's
// plugin. Its recipient age1arcatest1… carries an X25519 public key and its
// identity AGE-PLUGIN-ARCATEST-1… the X25519 secret key, and it wraps to
// stanzas of its own type, which only it unwraps: a vault wrapped to it
// opens only through the plugin protocol.
const testPluginName = "arcatest"

// testPluginDoVar says what the plugin does as it unwraps, besides
// unwrapping: "message" (shows a message), "ask-secret" and "ask-public"
// (asks for the PIN 1234), "confirm" (asks to confirm), "fail" (ends in a
// long error with a control character), "fail-quoting" (ends in an error
// that quotes the identity it was given); "ask-wrap" asks for a PIN as it
// wraps to a recipient.
const testPluginDoVar = "ARCATEST_PLUGIN_DO"

// testPluginStderr is what the plugin writes on its own stderr at each
// run: it must never reach arca's.
const testPluginStderr = "PLUGIN-STDERR-CANARY"

// The texts the plugin sends; each holds an escape sequence, which arca
// must show quoted.
const (
	testPluginMessage = "touch the key\x1b]0;owned\x07 now"
	testPluginPrompt  = "PIN\x1b[2J for the key:"
	testPluginFailure = "the key said no\x1b[31m"
)

// testPluginEnvVar, when set, names a file the plugin writes the names
// of its environment's variables to, one a line, each time it runs.
const testPluginEnvVar = "ARCATEST_PLUGIN_ENV_OUT"

func testPluginMain() {
	fmt.Fprintln(os.Stderr, testPluginStderr)
	if out := os.Getenv(testPluginEnvVar); out != "" {
		var names strings.Builder
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			names.WriteString(name + "\n")
		}
		if err := os.WriteFile(out, []byte(names.String()), 0o600); err != nil {
			os.Exit(1)
		}
	}
	p, err := plugin.New(testPluginName)
	if err != nil {
		os.Exit(1)
	}
	fs := flag.NewFlagSet("age-plugin-"+testPluginName, flag.ExitOnError)
	p.RegisterFlags(fs)
	fs.Parse(os.Args[1:])
	p.HandleRecipient(func(data []byte) (age.Recipient, error) {
		r, err := age.ParseX25519Recipient(string(data))
		if err != nil {
			return nil, errors.New("not an arcatest recipient")
		}
		if os.Getenv(testPluginDoVar) == "ask-wrap" {
			if _, err := p.RequestValue(testPluginPrompt, true); err != nil {
				return nil, err
			}
		}
		return testPluginRecipient{r}, nil
	})
	p.HandleIdentity(func(data []byte) (age.Identity, error) {
		id, err := age.ParseX25519Identity(string(data))
		if err != nil {
			return nil, errors.New("not an arcatest identity")
		}
		return &testPluginIdentity{p: p, id: id}, nil
	})
	os.Exit(p.Main())
}

type testPluginRecipient struct{ r *age.X25519Recipient }

func (t testPluginRecipient) Wrap(key []byte) ([]*age.Stanza, error) {
	ss, err := t.r.Wrap(key)
	for _, s := range ss {
		s.Type = testPluginName
	}
	return ss, err
}

type testPluginIdentity struct {
	p  *plugin.Plugin
	id *age.X25519Identity
}

func (t *testPluginIdentity) Unwrap(ss []*age.Stanza) ([]byte, error) {
	if err := t.act(os.Getenv(testPluginDoVar)); err != nil {
		return nil, err
	}
	var mine []*age.Stanza
	for _, s := range ss {
		if s.Type == testPluginName {
			c := *s
			c.Type = "X25519"
			mine = append(mine, &c)
		}
	}
	if len(mine) == 0 {
		return nil, age.ErrIncorrectIdentity
	}
	return t.id.Unwrap(mine)
}

// act does what $ARCATEST_PLUGIN_DO says before unwrapping.
func (t *testPluginIdentity) act(do string) error {
	switch do {
	case "message":
		t.p.DisplayMessage(testPluginMessage) // a message shown or not changes nothing
	case "ask-secret", "ask-public":
		pin, err := t.p.RequestValue(testPluginPrompt, do == "ask-secret")
		if err != nil {
			return err
		}
		if pin != "1234" {
			return errors.New("wrong PIN")
		}
	case "confirm":
		yes, err := t.p.Confirm("use the key?", "use it", "refuse")
		if err != nil {
			return err
		}
		if !yes {
			return errors.New("refused at the key")
		}
	case "fail":
		return errors.New(testPluginFailure + strings.Repeat(" and no", 100))
	case "fail-quoting":
		line := plugin.EncodeIdentity(testPluginName, []byte(t.id.String()))
		return errors.New("failed for identity " + line + " (" + strings.ToLower(line) + ")")
	}
	return nil
}

// testPluginKey makes a key of the test plugin: its identity file's text,
// as a hardware key's plugin writes it (its recipient in a comment), and
// its recipient.
func testPluginKey(t *testing.T) (text, recipient string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	recipient = plugin.EncodeRecipient(testPluginName, []byte(id.Recipient().String()))
	identity := plugin.EncodeIdentity(testPluginName, []byte(id.String()))
	if recipient == "" || identity == "" {
		t.Fatal("cannot encode the test plugin's key")
	}
	return "# created by age-plugin-arcatest\n# recipient: " + recipient + "\n" + identity + "\n", recipient
}

// writePluginIdentity writes a new key of the test plugin to dir/name and
// returns its path, the identity line and its recipient.
func writePluginIdentity(t *testing.T, dir, name string) (path, identityLine, recipient string) {
	t.Helper()
	text, recipient := testPluginKey(t)
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return path, lines[len(lines)-1], recipient
}

// newPluginRecipient is the recipient of a new key of the test plugin.
func newPluginRecipient(t *testing.T) string {
	t.Helper()
	_, r := testPluginKey(t)
	return r
}
