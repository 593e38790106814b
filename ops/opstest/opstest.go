// Package opstest makes what a test of an operation needs: a temporary
// HOME, an arca.toml read as if found there, and an ops.Service on it with
// every env's vault created. Nothing outside the temp dirs of the test is
// read or written: the config sees an environment of HOME alone.
package opstest

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
	"github.com/arca-secrets/arca/ops/backend"
)

// Options are what a test may set of a Fixture; the zero value is the
// default config, audit events discarded, the time now and the real
// backends.
type Options struct {
	Config   string           // the text of arca.toml; "" is the default config
	Audit    io.Writer        // where the service writes its audit events; nil discards them
	Now      func() time.Time // the clock of the service and of its audit events; nil is time.Now
	Backends ops.Backends     // nil is backend.Kinds{}, which opens the vaults for real
	Who      audit.Who        // stamped on every event, as the CLI stamps its process's; zero: none
	Source   string           // the events' source; "" is audit.SourceCLI
}

// Fixture is a service on a config in a temporary HOME.
type Fixture struct {
	Home    string       // the temporary HOME
	Config  *ops.Config  // o.Config, read in Home
	Service *ops.Service // closed when the test ends
}

// New makes a Fixture: a new HOME (t.TempDir), o.Config read there, and a
// service on it that has created the vault of each env of the config.
func New(t testing.TB, o Options) *Fixture {
	t.Helper()
	f := &Fixture{Home: t.TempDir()}
	cfg, err := ops.ParseConfig([]byte(o.Config), "arca.toml", Getenv(f.Home))
	if err != nil {
		t.Fatalf("opstest: parse config: %v", err)
	}
	f.Config = cfg
	f.Service = f.NewService(t, o)
	for _, env := range cfg.EnvNames() {
		if _, err := access.Init(f.Service, env); err != nil {
			t.Fatalf("opstest: init env %s: %v", env, err)
		}
	}
	return f
}

// NewService returns another service on f's config (another process's
// handle on the same vaults), closed when the test ends. o.Config is not
// read: the config is f's.
func (f *Fixture) NewService(t testing.TB, o Options) *ops.Service {
	t.Helper()
	w, bs := o.Audit, o.Backends
	if w == nil {
		w = io.Discard
	}
	if bs == nil {
		bs = backend.Kinds{}
	}
	source := o.Source
	if source == "" {
		source = audit.SourceCLI
	}
	aw := audit.NewWriter(w, source, o.Now)
	aw.SetWho(o.Who)
	svc := ops.New(ops.Options{Config: f.Config, Audit: aw, Now: o.Now, Backends: bs})
	t.Cleanup(func() { svc.Close() })
	return svc
}

// Getenv is the environment a Fixture's config is read in: HOME=home and
// nothing else.
func Getenv(home string) func(string) string {
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

// Events decodes the audit events a service wrote to out, one JSON line
// each; a line that is not an event fails t.
func Events(t testing.TB, out []byte) []audit.Event {
	t.Helper()
	var evs []audit.Event
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var e audit.Event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("opstest: audit line %q: %v", l, err)
		}
		evs = append(evs, e)
	}
	return evs
}
