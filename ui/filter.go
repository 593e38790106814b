package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/manifest"
)

// filterOf is the trail.Filter of a request's query, the names those of
// arca audit's flags.
func filterOf(get func(string) string, now time.Time) (trail.Filter, error) {
	f := trail.Filter{Env: get("env"), EnvlessToo: true, Ref: get("ref"), Op: get("op"), Outcome: get("outcome"), Actor: get("actor"),
		User: get("user"), Host: get("host")}
	for name, at := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if s := get(name); s != "" {
			t, err := trail.ParseWhen(s, now)
			if err != nil {
				return f, fmt.Errorf("%s %v", name, err)
			}
			*at = t
		}
	}
	switch f.Outcome {
	case "", audit.OK, audit.Denied, audit.NotFound, audit.Error, audit.BadRequest:
	default:
		return f, fmt.Errorf("outcome must be ok, denied, not_found, error or bad_request")
	}
	err := manifest.CheckEventName(f.Op)
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		// The checks name arca audit's flags: here they are the query's
		// parameters of the same names.
		return f, errors.New(queryNames(err.Error()))
	}
	return f, nil
}

// queryNames rewrites arca audit's flags in msg, as the filter's checks
// name them, to the query's parameters; a value they quote is left as it
// is.
func queryNames(msg string) string {
	return strings.NewReplacer("--ref ", "ref ", "--actor ", "actor ", "--user ", "user ", "--host ", "host ",
		"--op ", "op ", "--until ", "until ", "--since", "since").Replace(msg)
}
