package access

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/file"
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
// context's env when env is ""). Existing ones are kept, never replaced. A
// file vault path that is a symlink leading nowhere is refused, and so is
// a file vault whose identity is missing, before anything is made.
func Init(s *ops.Service, env string) (InitResult, error) {
	return InitWith(s, env, nil)
}

// InitWith is Init with a new identity protected by the passphrase protect
// gives (nil: a plain one); an existing identity opens through s.Keys.
func InitWith(s *ops.Service, env string, protect identity.Passphrase) (InitResult, error) {
	env, err := s.ResolveEnv(env)
	if err != nil {
		return InitResult{}, err
	}
	name, vc, err := s.Config().VaultFor(env)
	if err != nil {
		return InitResult{}, err
	}
	res := InitResult{Env: env, IdentityPath: vc.Identity, VaultPath: vc.Path}
	if vc.Kind == ops.KindEtcd {
		res.VaultPath = fmt.Sprintf("etcd %s at %s", vc.Prefix, strings.Join(vc.Endpoints, ","))
	} else if err := file.CheckPath(vc.Path); err != nil {
		return res, &ops.Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	} else if vc.Identity != identity.KeyPath && missing(vc.Identity) && !missing(vc.Path) {
		return res, ops.Errorf(manifest.OpError, "vault %s exists but identity %s does not: restore the identity (a new one could not open this vault)", vc.Path, vc.Identity)
	}
	if protect != nil {
		if err := protectable(vc.Identity); err != nil {
			return res, err
		}
	}
	res.Recipient, res.IdentityCreated, err = identity.EnsureWith(vc.Identity, s.Now(), s.Keys(), protect)
	if err != nil {
		return res, &ops.Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	recipients, err := ops.ParseRecipients("vaults."+name+".recipients", append([]string{res.Recipient}, vc.Recipients...))
	if err != nil {
		return res, err
	}
	if res.VaultCreated, err = s.CreateVault(context.Background(), name, vc, recipients); err != nil {
		return res, &ops.Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	return res, nil
}

// missing reports whether nothing is at path.
func missing(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// protectable refuses a passphrase for an identity init would keep as it
// is: $ARCA_IDENTITY_KEY, or a file that exists unprotected. init makes
// a new identity protected; it never changes one that exists.
func protectable(path string) error {
	if path == identity.KeyPath {
		return ops.Errorf(manifest.BadRequest, "--passphrase: the identity is $%s, no file to protect", identity.KeyEnv)
	}
	b, err := os.ReadFile(path)
	if err != nil || identity.Protected(b) {
		return nil // a new file is made protected; a protected one is kept
	}
	return ops.Errorf(manifest.BadRequest, "--passphrase: identity file %s exists and is not protected, and init keeps an identity that exists: arca identity passphrase protects it", path)
}
