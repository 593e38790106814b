package access

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
)

// IdentityRotation is what RotateIdentity did.
type IdentityRotation struct {
	Path   string   `json:"path"`    // the identity file, now holding the new identity
	OldKey string   `json:"old_key"` // the public key that was removed
	NewKey string   `json:"new_key"`
	Vaults []string `json:"vaults"` // every vault the old identity opened, now the new one's
}

// RotateIdentity replaces the identity env's vault opens with (the process
// context's env when "") by a new one, in every vault the old one opens:
//
//  1. a new identity is made beside the old (PATH.next), or the one a
//     stopped rotation left there is taken up again;
//  2. each vault gets the new key as a recipient, opened with the old;
//  3. each vault, opened with the new, drops the old key and is re-keyed,
//     so the old identity opens nothing stored after it;
//  4. the new identity replaces the old file.
//
// Until the last step the old identity stays where it was. A step that
// fails stops the rotation with both files in place; running it again
// carries on. Each recipients change and rekey is audited as its verb is.
func RotateIdentity(ctx context.Context, s *ops.Service, env string) (IdentityRotation, error) {
	env, err := s.ResolveEnv(env)
	if err != nil {
		return IdentityRotation{}, err
	}
	_, vc, err := s.Config().VaultFor(env)
	if err != nil {
		return IdentityRotation{}, err
	}
	res := IdentityRotation{Path: vc.Identity}
	if res.OldKey, err = ownRecipient(s, env); err != nil {
		return res, err
	}
	next := vc.Identity + ".next"
	if res.NewKey, _, err = identity.Ensure(next, s.Now()); err != nil {
		return res, ops.Errorf(manifest.OpError, "identity rotation: the new identity: %v", err)
	}
	envOf := vaultsOpenedWith(s, vc.Identity)
	res.Vaults = slices.Sorted(maps.Keys(envOf))
	stopped := func(step, vault string, err error) (IdentityRotation, error) {
		return res, ops.Errorf(ops.CodeOf(err), "identity rotation stopped at %s of vault %q: %v; the old identity is still %s and the new one %s: run it again to carry on",
			step, vault, err, vc.Identity, next)
	}
	for _, name := range res.Vaults {
		if err := ensureRecipient(ctx, s, envOf[name], res.NewKey); err != nil {
			return stopped("adding the new key", name, err)
		}
	}
	withNew := withIdentity(s, res.Vaults, next)
	defer withNew.Close()
	for _, name := range res.Vaults {
		cur, err := Recipients(ctx, withNew, envOf[name])
		if err == nil && slices.Contains(cur.Recipients, res.OldKey) {
			_, err = ChangeRecipients(ctx, withNew, envOf[name], nil, []string{res.OldKey})
		}
		if err == nil {
			_, err = Rekey(ctx, withNew, envOf[name])
		}
		if err != nil {
			return stopped("removing the old key", name, err)
		}
	}
	if err := os.Rename(next, vc.Identity); err != nil {
		return stopped("replacing the identity file", res.Vaults[0], err)
	}
	if err := fsio.SyncDir(filepath.Dir(vc.Identity)); err != nil {
		return res, ops.Errorf(manifest.OpError, "identity rotation: sync %s: %v", filepath.Dir(vc.Identity), err)
	}
	return res, nil
}

// vaultsOpenedWith maps each vault opened with the identity file path to
// one env of it.
func vaultsOpenedWith(s *ops.Service, path string) map[string]string {
	out := map[string]string{}
	for _, env := range s.Config().EnvNames() {
		name, vc, err := s.Config().VaultFor(env)
		if _, seen := out[name]; err == nil && !seen && vc.Identity == path {
			out[name] = env
		}
	}
	return out
}

// ensureRecipient adds key to env's vault unless it is there.
func ensureRecipient(ctx context.Context, s *ops.Service, env, key string) error {
	cur, err := Recipients(ctx, s, env)
	if err != nil || slices.Contains(cur.Recipients, key) {
		return err
	}
	_, err = ChangeRecipients(ctx, s, env, []string{key}, nil)
	return err
}

// withIdentity is a Service like s whose vaults named in vaults open with
// the identity file path.
func withIdentity(s *ops.Service, vaults []string, path string) *ops.Service {
	cfg := *s.Config()
	cfg.Vaults = maps.Clone(cfg.Vaults)
	if cfg.Vaults == nil {
		cfg.Vaults = map[string]ops.VaultConfig{}
	}
	for _, name := range vaults {
		v, ok := cfg.Vaults[name]
		if !ok {
			v = ops.VaultConfig{Kind: ops.KindFile} // the embedded vault, with no [vaults] table
		}
		v.Identity = path
		cfg.Vaults[name] = v
	}
	return s.WithConfig(&cfg)
}
