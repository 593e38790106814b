package identity

import (
	"fmt"
	"strings"

	"filippo.io/age"
	"filippo.io/age/plugin"
)

// Parse parses the age identities of text, the plain text of the identity
// file path names (in errors). Its plugin identities have no terminal to
// ask on: ParseWith gives them one.
func Parse(path, text string) ([]age.Identity, error) {
	return ParseWith(path, text, nil)
}

// ParseWith parses text as age reads an identity file: one identity a
// line, native (AGE-SECRET-KEY-1…) or a plugin's (AGE-PLUGIN-NAME-1…),
// with blank lines and # comments between. A plugin identity's recipient
// is the one a comment of its file names ("# recipient: age1NAME1…" or
// "# public key: age1NAME1…", as the plugins write them), the last one
// above it of the same plugin, else the first below it. Its plugin talks to
// the person through prompt (nil: no terminal). An error names path and
// the line, never the line's text: it may be a secret key.
func ParseWith(path, text string, prompt Prompter) ([]age.Identity, error) {
	var ids []age.Identity
	var plugins []*pluginIdentity
	named := map[string][]string{} // plugin name: recipients its comments name, in order
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		n := i + 1
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if r, ok := commentRecipient(line); ok {
				name, _, _ := plugin.ParseRecipient(r)
				named[name] = append(named[name], r)
			}
		case strings.HasPrefix(strings.ToUpper(line), "AGE-PLUGIN-"):
			name, _, err := plugin.ParseIdentity(line)
			if err != nil {
				return nil, fmt.Errorf("%s line %d is not a valid age plugin identity (AGE-PLUGIN-NAME-1…)", Named(path), n)
			}
			p := &pluginIdentity{name: name, encoding: line, prompt: prompt}
			if rs := named[name]; len(rs) > 0 {
				p.recipient = rs[len(rs)-1]
			}
			plugins = append(plugins, p)
			ids = append(ids, p)
		case strings.HasPrefix(line, "age1"):
			return nil, fmt.Errorf("%s line %d is a recipient (a public key), not an identity", Named(path), n)
		default:
			id, err := age.ParseIdentities(strings.NewReader(line))
			if err != nil {
				return nil, fmt.Errorf("%s line %d is not an age identity", Named(path), n)
			}
			ids = append(ids, id...)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s holds no valid age identity", Named(path))
	}
	for _, p := range plugins {
		if rs := named[p.name]; p.recipient == "" && len(rs) > 0 {
			p.recipient = rs[0]
		}
	}
	return ids, nil
}

// commentRecipient is the plugin recipient a comment line names, if it
// names one: "# recipient: age1NAME1…" or "# public key: age1NAME1…", in
// any case, with any spaces around.
func commentRecipient(line string) (string, bool) {
	label, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
	if !ok {
		return "", false
	}
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "recipient", "public key":
	default:
		return "", false
	}
	value = strings.TrimSpace(value)
	if !isPluginRecipient(value) || len(value) > MaxPluginRecipient {
		return "", false
	}
	if _, _, err := plugin.ParseRecipient(value); err != nil {
		return "", false
	}
	return value, true
}

// Plugins returns the plugin names of the plugin identities of ids, in
// order.
func Plugins(ids []age.Identity) []string {
	var names []string
	for _, id := range ids {
		if name, ok := PluginName(id); ok {
			names = append(names, name)
		}
	}
	return names
}

// Named is how a message names the identity at path: "identity file
// PATH", or "$ARCA_IDENTITY_KEY" for the variable, which is no file.
func Named(path string) string {
	if path == KeyPath {
		return "$" + KeyEnv
	}
	return "identity file " + path
}
