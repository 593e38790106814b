package mcp

import (
	"strings"
	"testing"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/config"
	"github.com/arca-secrets/arca/ops/opstest"
)

// TestUnpinnedConfigRefused: a config found in the working directory that
// names services, actions or a PDP does not start a session; the same
// config pinned does, and one in the working directory that names none
// of them does.
func TestUnpinnedConfigRefused(t *testing.T) {
	const services = "[services.gh]\nbase_url = \"https://api.github.com\"\ncredential = \"arca://ci/gh\"\nauth = \"bearer\"\npaths = [\"/*\"]\n"
	const actions = "[actions.mig]\nargv = [\"true\"]\n"
	for _, tc := range []struct {
		name, config string
		origin       config.Origin
		want         string // "": it starts
	}{
		{"services in the working directory", services, config.OriginImplicit, "sets [services]"},
		{"actions in the working directory", actions, config.OriginImplicit, "sets [actions]"},
		{"a PDP in the working directory", pdpConfig, config.OriginImplicit, "sets [serve.pdp]"},
		{"all three", services + actions + pdpConfig, config.OriginImplicit, "sets [services], [actions], [serve.pdp]"},
		{"services pinned", services + actions + pdpConfig, config.OriginPinned, ""},
		{"guardrails alone in the working directory", "[[guardrails.rule]]\nops = [\"get\"]\nref = \"prod/*\"\nreason = \"not here\"\n", config.OriginImplicit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ops.ParseConfig([]byte(tc.config), "arca.toml", opstest.Getenv(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Origin = tc.origin
			err = unpinned(cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--config")):
				t.Fatalf("error = %v, want one saying %q and naming --config", err, tc.want)
			}
		})
	}
}
