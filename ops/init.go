package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// InitResult says what Init made and what it kept.
type InitResult struct {
	Env             string
	IdentityPath    string
	IdentityCreated bool
	Recipient       string // the identity's public key
	VaultPath       string
	VaultCreated    bool
}

// Init makes the identity and the file vault behind env (the process
// context's env when env is ""). Existing ones are kept, never replaced.
func (s *Service) Init(env string) (InitResult, error) {
	env, err := s.cfg.ResolveEnv("", env, s.ctxEnv)
	if err != nil {
		return InitResult{}, err
	}
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return InitResult{}, err
	}
	res := InitResult{Env: env, IdentityPath: vc.Identity, VaultPath: vc.Path}
	if vc.Kind == "etcd" {
		res.VaultPath = fmt.Sprintf("etcd %s at %s", vc.Prefix, strings.Join(vc.Endpoints, ","))
	} else if missing(vc.Identity) && !missing(vc.Path) {
		return res, Errorf(manifest.OpError, "vault %s exists but identity %s does not: restore the identity (a new one could not open this vault)", vc.Path, vc.Identity)
	}
	res.Recipient, res.IdentityCreated, err = vault.EnsureIdentity(vc.Identity, s.now())
	if err != nil {
		return res, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	recipients, err := parseRecipients(append([]string{res.Recipient}, vc.Recipients...))
	if err != nil {
		return res, err
	}
	if res.VaultCreated, err = createVault(name, vc, recipients, s.now); err != nil {
		return res, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	return res, nil
}

// createVault makes an empty vault of vc's kind, keeping one already there.
func createVault(name string, vc VaultConfig, recipients []age.Recipient, now func() time.Time) (bool, error) {
	switch vc.Kind {
	case "file":
		return vault.CreateFile(vc.Path, recipients)
	case "etcd":
		o, err := etcdOptions(vc, now)
		if err != nil {
			return false, err
		}
		return vault.CreateEtcd(context.Background(), o, recipients)
	}
	return false, fmt.Errorf("vault %q: kind %q is not available in this build", name, vc.Kind)
}

// missing reports whether nothing is at path.
func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

func parseRecipients(rs []string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r] {
			continue
		}
		seen[r] = true
		p, err := age.ParseX25519Recipient(r)
		if err != nil {
			return nil, Errorf(manifest.OpError, "recipient %q is not an age X25519 public key", r)
		}
		out = append(out, p)
	}
	return out, nil
}
