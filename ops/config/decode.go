package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// decodeError turns a go-toml error into "name:line: problem": an unknown
// key is named with its line (the first of several, the rest counted), a
// wrong type says what TOML type was found rather than which Go type it
// missed.
func decodeError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := &strict.Errors[0]
		line, _ := first.Position()
		more := ""
		if n := len(strict.Errors) - 1; n > 0 {
			more = " (and " + plural(n, "more unknown key") + ")"
		}
		return fmt.Errorf("%s:%d: unknown key %q%s", name, line, keyString(first.Key()), more)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if rest, ok := strings.CutPrefix(msg, "cannot decode TOML "); ok {
			// The rest names Go types; say what a config author can act on.
			got, _, _ := strings.Cut(rest, " ")
			msg = "wrong type (got a TOML " + got + ")"
		}
		if key := de.Key(); len(key) > 0 {
			return fmt.Errorf("%s:%d: key %q: %s", name, line, keyString(key), msg)
		}
		return fmt.Errorf("%s:%d: %s", name, line, msg)
	}
	return fmt.Errorf("%s: %v", name, err)
}

func keyString(k toml.Key) string { return strings.Join(k, ".") }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
