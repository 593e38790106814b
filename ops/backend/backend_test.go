package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/ops"
)

// An etcd vault's settings reach the backend: relative file paths are
// taken from the config's directory (the backend reads the password file,
// bounded: vault/etcd's tests).
func TestEtcdOptions(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "arca.toml")
	if err := os.WriteFile(conf, []byte(`
[envs.prod]
vault = "team"
[vaults.team]
kind = "etcd"
endpoints = ["10.0.0.1:2379", "10.0.0.2:2379"]
prefix = "/arca/prod/"
username = "arca"
password_file = "pw"
tls_ca = "ca.pem"
tls_cert = "~/c.pem"
tls_key = "/abs/k.pem"
timeout_ms = 1500
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ops.LoadConfig(conf, func(k string) string {
		if k == "HOME" {
			return "/home/u"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	_, vc, err := cfg.VaultFor("prod")
	if err != nil {
		t.Fatal(err)
	}
	o := etcdOptions(vc, nil)
	switch {
	case o.PasswordFile != pw || o.Username != "arca" || o.Password != "":
		t.Errorf("auth = %q / %q %q", o.Username, o.PasswordFile, o.Password)
	case o.CAFile != filepath.Join(dir, "ca.pem") || o.CertFile != "/home/u/c.pem" || o.KeyFile != "/abs/k.pem":
		t.Errorf("TLS files = %q %q %q", o.CAFile, o.CertFile, o.KeyFile)
	case o.Timeout != 1500*time.Millisecond || o.Prefix != "/arca/prod/" || len(o.Endpoints) != 2:
		t.Errorf("options = %+v", o)
	case o.Identity != "/home/u/.config/arca/identity.txt":
		t.Errorf("identity = %q", o.Identity)
	case !strings.HasPrefix(o.PinFile, "/home/u/.local/state/arca/pins/team-") || !strings.HasSuffix(o.PinFile, ".pin"):
		t.Errorf("pin file = %q", o.PinFile)
	}
}
