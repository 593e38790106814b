package identity

import (
	"errors"
	"fmt"
	"strings"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/arca-secrets/arca/internal/termsafe"
)

// Age plugins (age-plugin-NAME on $PATH, age's plugin protocol) hold keys
// arca never sees: a YubiKey, a Secure Enclave, a TPM. An identity file's
// AGE-PLUGIN-NAME-1… line is a plugin identity (it may hold key material or
// a handle to it: it is treated as secret and never printed), and an
// age1NAME1… recipient is a plugin recipient. The plugin runs for each
// unwrap or wrap of a data key, as a child of arca; what it says reaches
// the person only through a Prompter (the terminal), never stdout or
// stderr, and what it sends is bounded and quoted (internal/termsafe).
//
//	MaxPluginText       a message or prompt a plugin sends, at most
//	MaxPluginError      the part of a plugin's error quoted in arca's
//	MaxPluginRecipient  an age1NAME1… recipient string, at most
const (
	MaxPluginText      = 1 << 10
	MaxPluginError     = 200
	MaxPluginRecipient = 4 << 10
)

// ErrNoTerminal is what a Prompter returns when there is no terminal to
// talk to the person on.
var ErrNoTerminal = errors.New("no terminal is open")

// Prompter is how an age plugin talks to the person running arca: on the
// controlling terminal. Every text it is given is the plugin's, already
// bounded and quoted; name is the plugin's name (age-plugin-NAME). With no
// terminal each method returns an error wrapping ErrNoTerminal.
type Prompter interface {
	// Message shows a message of the plugin.
	Message(name, text string) error
	// Ask asks for a value, read without echo when secret.
	Ask(name, prompt string, secret bool) (string, error)
	// Confirm asks for one of two choices (no may be ""): whether yes was
	// chosen.
	Confirm(name, prompt, yes, no string) (bool, error)
	// Waiting says the plugin has been waiting a while, for a touch of the
	// key most likely.
	Waiting(name string)
}

// PluginName returns the plugin name of id when it is an age plugin
// identity.
func PluginName(id age.Identity) (string, bool) {
	p, ok := id.(*pluginIdentity)
	if !ok {
		return "", false
	}
	return p.name, true
}

// pluginIdentity is an AGE-PLUGIN-NAME-1… identity. Each Unwrap runs the
// plugin with a fresh ClientUI, so a refusal to ask is this unwrap's own.
type pluginIdentity struct {
	name      string
	encoding  string   // secret: never printed
	recipient string   // the recipient its file's comment names, or ""
	prompt    Prompter // nil: no terminal
}

// String names the identity without its key material.
func (p *pluginIdentity) String() string { return "age plugin identity (age-plugin-" + p.name + ")" }

func (p *pluginIdentity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	ui := &pluginUI{name: p.name, prompt: p.prompt, secret: p.encoding}
	id, err := plugin.NewIdentity(p.encoding, ui.client())
	if err != nil {
		return nil, fmt.Errorf("age plugin identity (age-plugin-%s) is malformed", p.name)
	}
	key, err := id.Unwrap(stanzas)
	if errors.Is(err, age.ErrIncorrectIdentity) {
		return nil, age.ErrIncorrectIdentity
	}
	return key, ui.fail(err)
}

// pluginRecipient is an age1NAME1… recipient: a data key is wrapped to it
// by running the plugin. A plugin that asks for input to wrap is refused:
// wrapping happens where nobody may be at hand (serve, a rekey).
type pluginRecipient struct {
	name     string
	encoding string
}

// String is the recipient, as a vault header lists it.
func (r *pluginRecipient) String() string { return r.encoding }

func (r *pluginRecipient) Wrap(fileKey []byte) ([]*age.Stanza, error) {
	s, _, err := r.WrapWithLabels(fileKey)
	return s, err
}

func (r *pluginRecipient) WrapWithLabels(fileKey []byte) ([]*age.Stanza, []string, error) {
	ui := &pluginUI{name: r.name, wrapping: true}
	pr, err := plugin.NewRecipient(r.encoding, ui.client())
	if err != nil {
		return nil, nil, fmt.Errorf("age plugin recipient (age-plugin-%s) is malformed", r.name)
	}
	s, labels, err := pr.WrapWithLabels(fileKey)
	return s, labels, ui.fail(err)
}

// parsePluginRecipient parses s, an age1NAME1… string.
func parsePluginRecipient(s string) (age.Recipient, error) {
	if len(s) > MaxPluginRecipient {
		return nil, fmt.Errorf("is longer than the %d bytes an age plugin recipient may be", MaxPluginRecipient)
	}
	name, _, err := plugin.ParseRecipient(s)
	if err != nil {
		return nil, errors.New("is not a valid age plugin recipient (age1NAME1…)")
	}
	return &pluginRecipient{name: name, encoding: s}, nil
}

// isPluginRecipient reports whether s has the form of an age plugin
// recipient, age's own test: age1, then a name, then 1 and the data (a
// native key's bech32 data holds no 1). age1pq1… and age1tag1… are age's
// own recipient types, which arca does not take.
func isPluginRecipient(s string) bool {
	return strings.HasPrefix(s, "age1") && strings.Count(s, "1") > 1 &&
		!strings.HasPrefix(s, "age1pq1") && !strings.HasPrefix(s, "age1tag")
}

// pluginUI is the ClientUI of one run of a plugin: it bounds and quotes
// what the plugin sends before the Prompter sees it, and keeps why it
// could not answer, for the error the run ends in (the plugin package
// drops the callbacks' errors).
type pluginUI struct {
	name     string
	prompt   Prompter
	wrapping bool   // wrapping to a recipient: no one is asked
	secret   string // the identity the plugin was given: never in what arca says
	refused  error
}

func (u *pluginUI) client() *plugin.ClientUI {
	return &plugin.ClientUI{
		DisplayMessage: func(_, msg string) error {
			if u.prompt == nil {
				return ErrNoTerminal
			}
			return u.prompt.Message(u.name, pluginText(msg))
		},
		RequestValue: func(_, prompt string, secret bool) (string, error) {
			if err := u.ask(prompt); err != nil {
				return "", err
			}
			v, err := u.prompt.Ask(u.name, pluginText(prompt), secret)
			return v, u.keep(err)
		},
		Confirm: func(_, prompt, yes, no string) (bool, error) {
			if err := u.ask(prompt + yes + no); err != nil {
				return false, err
			}
			ok, err := u.prompt.Confirm(u.name, pluginText(prompt), pluginText(yes), pluginText(no))
			return ok, u.keep(err)
		},
		WaitTimer: func(string) {
			if u.prompt != nil {
				u.prompt.Waiting(u.name)
			}
		},
	}
}

// ask refuses a request for input there is no one to ask, or whose text
// is over the bound.
func (u *pluginUI) ask(text string) error {
	switch {
	case u.prompt == nil:
		return u.keep(ErrNoTerminal)
	case len(text) > MaxPluginText:
		return u.keep(fmt.Errorf("its prompt is longer than %d bytes", MaxPluginText))
	}
	return nil
}

// keep notes err as the reason the plugin's request went unanswered.
func (u *pluginUI) keep(err error) error {
	if err != nil && u.refused == nil {
		u.refused = err
	}
	return err
}

// fail is err, the end of a run of the plugin, as arca says it: why arca
// did not answer the plugin, a plugin not on $PATH, or the plugin's own
// words bounded and quoted.
func (u *pluginUI) fail(err error) error {
	var nf *plugin.NotFoundError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nf):
		return fmt.Errorf("age plugin age-plugin-%s is not on $PATH: install it, or fix PATH", u.name)
	case u.refused != nil && u.wrapping:
		return fmt.Errorf("plugin age-plugin-%s asked for input to wrap a data key to its recipient: arca asks for a plugin only to open a vault, never to wrap one", u.name)
	case errors.Is(u.refused, ErrNoTerminal):
		return fmt.Errorf("plugin age-plugin-%s asked for input and no terminal is open: run arca from a terminal, or set the plugin up to need none", u.name)
	case u.refused != nil:
		return fmt.Errorf("plugin age-plugin-%s asked for input, which arca could not give: %v", u.name, u.refused)
	}
	msg := strings.TrimPrefix(err.Error(), u.name+" plugin: ")
	if u.secret != "" { // a plugin may quote the identity it was given
		for _, form := range []string{u.secret, strings.ToLower(u.secret), strings.ToUpper(u.secret)} {
			msg = strings.ReplaceAll(msg, form, "<identity>")
		}
	}
	if len(msg) > MaxPluginError {
		msg = msg[:MaxPluginError] + "…"
	}
	return fmt.Errorf("plugin age-plugin-%s: %s", u.name, termsafe.Quote(msg))
}

// pluginText is text a plugin sent, bounded and quoted for a terminal.
func pluginText(s string) string {
	if len(s) > MaxPluginText {
		s = s[:MaxPluginText] + "…"
	}
	return termsafe.Escape(s)
}
