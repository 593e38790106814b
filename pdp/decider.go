package pdp

import "context"

// Decider is a PDP as serve consults it: one verdict per Decide, every
// failure an *Unreachable, nothing cached. A Decider is safe for concurrent
// use; Close ends whatever it keeps running (a persistent child, HTTP
// requests in flight) and fails the decisions still waiting.
type Decider interface {
	Decide(ctx context.Context, req Request) (Verdict, error)
	Close() error
}

// whyClosed is why a decision of a Decider that was closed is unreachable.
const whyClosed = "pdp is closed"

// The modes of an exec PDP (Config.Mode).
const (
	ModeSpawn      = "spawn"      // one `sh -c` per decision (the default)
	ModePersistent = "persistent" // one long-lived child, one request per line
)

// The APIs of an HTTP PDP (Config.API).
const (
	APIOPA     = "opa"     // OPA's REST data API
	APIAuthZEN = "authzen" // OpenID AuthZEN 1.0 access evaluation
)

// New returns the Decider cfg describes: an HTTP client when cfg.URL is
// set, a persistent child when cfg.Mode is ModePersistent, and otherwise
// one spawn per decision. It starts nothing: a persistent child starts at
// the first decision, a connection at the first request. A URL that
// EndpointProblem refuses makes every decision unreachable.
func New(cfg Config) Decider {
	switch {
	case cfg.URL != "":
		return newHTTP(cfg)
	case cfg.Mode == ModePersistent:
		return newPersistent(cfg, "sh")
	}
	return spawner{cfg: cfg}
}

// spawner is the default Decider: Decide with its Config, one process per
// decision.
type spawner struct{ cfg Config }

func (s spawner) Decide(ctx context.Context, req Request) (Verdict, error) {
	return Decide(ctx, s.cfg, req)
}

func (spawner) Close() error { return nil }
