package inject

import (
	"errors"
	"fmt"

	"github.com/arca-secrets/arca/internal/scrub"
)

// maskSet returns the values of secrets to keep out of a child's output
// (arca run masks it by default), each registered in a scrub.Set under its
// variable's name, so that the engine writes <redacted:NAME> in place of
// every form of it (its bytes, JSON and URL escaping, hex, base64, …; see
// package scrub): a File secret's value too. Literals (an env file's values
// as written, no secrets) and empty values are left out; of two secrets
// with the same value, the first one in secrets names it.
//
// It also returns one warning per variable whose value cannot be scrubbed
// (under scrub.MinLen bytes, or past one of the engine's bounds), in the
// order of secrets: each names the variable and the reason, never the
// value. Such a value reaches the output as the child writes it.
func maskSet(secrets []Materialized) (*scrub.Set, []string) {
	set := scrub.NewSet()
	var warnings []string
	for _, m := range secrets {
		v := m.Value.Reveal()
		if m.Literal || len(v) == 0 {
			continue
		}
		err := set.Add(m.Name, v)
		switch {
		case err == nil:
		case errors.Is(err, scrub.ErrTooShort):
			warnings = append(warnings, fmt.Sprintf("the value of %s is under %d bytes: it cannot be scrubbed from the command's output, which shows it as written", m.Name, scrub.MinLen))
		default:
			warnings = append(warnings, fmt.Sprintf("the value of %s cannot be scrubbed from the command's output, which shows it as written: %v", m.Name, err))
		}
	}
	return set, warnings
}
