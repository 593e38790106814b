package backend

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/identity"
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

// Kinds opens and creates a file vault, reports its files' modes when it
// cannot open, and refuses a kind it does not have as op_error.
func TestKinds(t *testing.T) {
	dir := t.TempDir()
	idPath := filepath.Join(dir, "identity.txt")
	recipient, _, err := identity.Ensure(idPath, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r, err := identity.ParseRecipient(recipient)
	if err != nil {
		t.Fatal(err)
	}
	vc := ops.VaultConfig{Kind: ops.KindFile, Path: filepath.Join(dir, "v.vault"), Identity: idPath}
	if created, err := (Kinds{}).Create(context.Background(), "v", vc, []age.Recipient{r}); err != nil || !created {
		t.Fatalf("Create: %t, %v", created, err)
	}
	st, err := Kinds{}.Open("v", vc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.List(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.Chmod(vc.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := (Kinds{}).Problems(vc); len(p) == 0 || !strings.Contains(strings.Join(p, "\n"), "v.vault") {
		t.Errorf("Problems of a 0644 vault: %q", p)
	}
	if p := (Kinds{}).Problems(ops.VaultConfig{Kind: ops.KindEtcd}); p != nil {
		t.Errorf("Problems of an etcd vault: %q", p)
	}
	bad := ops.VaultConfig{Kind: "s3"}
	if _, err := (Kinds{}).Open("x", bad, nil); ops.CodeOf(err) != manifest.OpError || !strings.Contains(err.Error(), `kind "s3" is not available`) {
		t.Errorf("Open of an unknown kind: %v", err)
	}
	if _, err := (Kinds{}).Create(context.Background(), "x", bad, nil); err == nil || !strings.Contains(err.Error(), `kind "s3"`) {
		t.Errorf("Create of an unknown kind: %v", err)
	}
}
