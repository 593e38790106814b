package ui

import (
	"fmt"
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
	if err := manifest.CheckEventName(f.Op); err != nil {
		return f, err
	}
	return f, f.Check()
}
