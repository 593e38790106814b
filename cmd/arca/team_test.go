package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// TestTeamScripts runs the transcripts in testdata/team against one real
// etcd member. Each script gets its own key prefix ($ETCD_PREFIX), a
// config for it at $WORK/team.toml (env prod on the shared vault) pinned by
// $ARCA_CONFIG, and the member's endpoint in $ETCD_ENDPOINT.
func TestTeamScripts(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ep := c.Endpoints()[0]
	testscript.Run(t, scriptParams("testdata/team", func(env *testscript.Env) error {
		prefix := "/arca/" + filepath.Base(env.WorkDir) + "/"
		cfg := fmt.Sprintf(`default_env = "prod"
[envs.prod]
vault = "team"
[vaults.team]
kind = "etcd"
endpoints = [%q]
prefix = %q
`, ep, prefix)
		path := filepath.Join(env.WorkDir, "team.toml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return err
		}
		env.Setenv("ARCA_CONFIG", path)
		env.Setenv("ETCD_PREFIX", prefix)
		env.Setenv("ETCD_ENDPOINT", ep)
		env.Setenv("ETCD_PREFIX_RE", strings.ReplaceAll(prefix, "-", `\-`))
		return nil
	}))
}
