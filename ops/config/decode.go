package config

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// decode decodes data strictly: an unknown key is an error naming it and
// its line, as is a wrong type or a syntax error (decodeError). The scan
// (scan.go) goes first, so that decoding takes time linear in the size of
// data: past MaxKeys keys nothing is decoded, and past maxStrictUnknown
// unknown keys the scan, not go-toml, reports them.
func decode(data []byte, name string) (*document, error) {
	sh := scanShape(data)
	if sh.keys > MaxKeys {
		return nil, fmt.Errorf("%s: more than %d keys (a config holds at most %d)", name, MaxKeys, MaxKeys)
	}
	var doc document
	dec := toml.NewDecoder(bytes.NewReader(data))
	strict := sh.syntax || sh.unknown <= maxStrictUnknown
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(name, err)
	}
	if !strict {
		line := 1 + bytes.Count(data[:sh.at], []byte("\n"))
		return nil, fmt.Errorf("%s:%d: unknown key %q%s", name, line, keyString(sh.first), moreUnknown(sh.unknown-1))
	}
	return &doc, nil
}

// decodeError turns a go-toml error into "name:line: problem": an unknown
// key is named with its line (the first of several, the rest counted), a
// wrong type says what TOML type was found rather than which Go type it
// missed.
func decodeError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := &strict.Errors[0]
		line, _ := first.Position()
		return fmt.Errorf("%s:%d: unknown key %q%s", name, line, keyString(first.Key()), moreUnknown(len(strict.Errors)-1))
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

// moreUnknown says how many more unknown keys there are, if any.
func moreUnknown(n int) string {
	if n == 0 {
		return ""
	}
	return " (and " + plural(n, "more unknown key") + ")"
}

// maxKeyShown is the most of a key a message shows.
const maxKeyShown = 256

// keyString is the dotted key k, cut to maxKeyShown bytes.
func keyString(k []string) string {
	s := strings.Join(k, ".")
	if len(s) <= maxKeyShown {
		return s
	}
	cut := maxKeyShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
