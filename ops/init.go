package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault/identity"
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
	res.Recipient, res.IdentityCreated, err = identity.Ensure(vc.Identity, s.now())
	if err != nil {
		return res, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	recipients, err := parseRecipients("vaults."+name+".recipients", append([]string{res.Recipient}, vc.Recipients...))
	if err != nil {
		return res, err
	}
	if res.VaultCreated, err = s.backends.Create(context.Background(), name, vc, recipients); err != nil {
		return res, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	return res, nil
}

// missing reports whether nothing is at path.
func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// parseRecipients parses recipients, dropping repeats. An error names the
// list (where) and the entry's position, never its text: a secret key
// pasted there must not be printed.
func parseRecipients(where string, rs []string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(rs))
	seen := map[string]bool{}
	for i, r := range rs {
		if seen[r] {
			continue
		}
		seen[r] = true
		p, err := identity.ParseRecipient(r)
		if err != nil {
			return nil, Errorf(manifest.OpError, "%s entry %d %v", where, i, err)
		}
		out = append(out, p)
	}
	return out, nil
}
