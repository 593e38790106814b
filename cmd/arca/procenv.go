package main

import (
	"os"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/internal/passenv"
)

// processEnv is the process's environment as it started: arca reads its
// settings and hands variables on from this copy alone (getenv, environ),
// so that the process's own can be cleared of what no child may see.
type processEnv []string

func (e processEnv) getenv(name string) string {
	v, _ := e.lookup(name)
	return v
}

// lookup is name's value, telling unset from empty: the first of a name
// given twice, as os.Getenv reads it.
func (e processEnv) lookup(name string) (string, bool) {
	for _, kv := range e {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func (e processEnv) environ() []string { return slices.Clone(e) }

// clearInherited removes from the process's environment every ARCA_*
// variable and every cloud or CI credential (passenv.Withheld): a child arca
// starts with an environment of its own choosing never sees them, and an
// age plugin, which age's client starts with the process's environment
// as it is, must not either ($ARCA_IDENTITY_KEY holds a key).
func clearInherited() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if passenv.Withheld(name) {
			os.Unsetenv(name)
		}
	}
}
