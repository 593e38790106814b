package rig

import (
	"slices"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops/config"
)

// TestEtcdConfig: arca reads the config as the vault it describes.
func TestEtcdConfig(t *testing.T) {
	eps := []string{"127.0.0.1:2379", "127.0.0.1:2380"}
	c, err := config.Parse([]byte(EtcdConfig(eps, "/arca-bench/run0/", 1500*time.Millisecond)), "arca.toml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	v := c.Vaults["team"]
	if c.Envs[config.Default].Vault != "team" || v.Kind != config.KindEtcd || !slices.Equal(v.Endpoints, eps) ||
		v.Prefix != "/arca-bench/run0/" || v.TimeoutMS != 1500 || c.Serve.PDP != nil {
		t.Errorf("envs %v, vault %+v, pdp %v", c.Envs, v, c.Serve.PDP)
	}
}
