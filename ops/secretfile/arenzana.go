package secretfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/arca-secrets/arca/manifest"
)

// parseArenzana reads the store.json of github.com/arenzana/arca (checked
// against one its v0.11.0 binary wrote):
//
//	{"version": 1, "generation": N, "recipients": [...],
//	 "secrets": {NAME: {"value": "<armored age ciphertext>", "created_at": …, …}}}
//
// Each value is decrypted with o.Identities; the result is Flat. version
// must be 1. Every other key, at the top and in a secret (generation,
// recipients, created_at, updated_at, tags, description, expiry and
// whatever a later version adds), is ignored and not carried over: the
// value is what a store is read for, and a field added later must not stop
// a migration. A store with "secrets" missing or null has no entries, as
// the peer itself reads it.
func parseArenzana(data []byte, o Options, c *collector) error {
	w, err := newJSONWalker(data)
	if err != nil {
		return err
	}
	type sealed struct {
		name, armored string
	}
	var (
		version string
		vline   int
		secrets []sealed
	)
	err = w.top(func(key string, line int, v json.Token) error {
		switch key {
		case "version":
			vline = line
			switch n, ok := v.(json.Number); {
			case !ok:
				version = describe(v)
			case len(n) > 20:
				version = "a number of " + fmt.Sprint(len(n)) + " digits"
			default:
				version = string(n)
			}
			return w.skip(v)
		case "secrets":
			if v == nil {
				return nil
			}
			if v != json.Delim('{') {
				return fmt.Errorf("line %d: %s is %s (want an object)", line, keyPath(key), describe(v))
			}
			return w.object([]string{key}, func(name string, line int, v json.Token) error {
				if err := arenzanaName(line, name); err != nil {
					return err
				}
				if len(secrets) >= MaxEntries {
					return fmt.Errorf("line %d: more than %d entries", line, MaxEntries)
				}
				if v != json.Delim('{') {
					return fmt.Errorf("line %d: secret %s is %s (want an object)", line, quoteName(name), describe(v))
				}
				s := sealed{name: name}
				found := false
				err := w.object([]string{key, name}, func(field string, fline int, v json.Token) error {
					if field != "value" {
						return w.skip(v)
					}
					text, ok := v.(string)
					if !ok {
						return fmt.Errorf("line %d: secret %s: the value is %s (want an age ciphertext)", fline, quoteName(name), describe(v))
					}
					s.armored, found = text, true
					return nil
				})
				if err == nil && !found {
					err = fmt.Errorf("line %d: secret %s has no value", line, quoteName(name))
				}
				secrets = append(secrets, s)
				return err
			})
		}
		return w.skip(v)
	})
	if err != nil {
		return err
	}
	switch {
	case vline == 0:
		return errors.New(`no "version": not an arenzana/arca store`)
	case version != "1":
		return fmt.Errorf("line %d: the version is %s (want 1)", vline, version)
	case len(secrets) > 0 && len(o.Identities) == 0:
		return errors.New("an arenzana/arca store is encrypted: give the age identity that opens it (--identity)")
	}
	for _, s := range secrets {
		where := "secret " + quoteName(s.name)
		value, err := arenzanaOpen(s.armored, o.Identities)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if err := c.add("", s.name, value, where, func() string { return where }); err != nil {
			return err
		}
	}
	return nil
}

func arenzanaName(line int, name string) error {
	if p := nameProblem(name); p != "" {
		return fmt.Errorf("line %d: secret %s", line, p)
	}
	return nil
}

// arenzanaOpen decrypts one armored value, reading at most one byte more
// than a value may hold. age's own messages are not passed on: the armor
// reader's quote the text it could not read, which in a hand-edited store
// may be a plaintext value.
func arenzanaOpen(armored string, ids []age.Identity) ([]byte, error) {
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(armored)), ids...)
	var nomatch *age.NoIdentityMatchError
	if errors.As(err, &nomatch) {
		return nil, errors.New("cannot decrypt with the given identity")
	}
	if err != nil {
		return nil, errors.New("cannot decrypt: the value is not an armored age ciphertext, or its header is damaged")
	}
	b, err := io.ReadAll(io.LimitReader(r, manifest.MaxValue+1))
	if err != nil {
		return nil, errors.New("cannot decrypt: the ciphertext is damaged (it does not authenticate)")
	}
	return b, nil
}
