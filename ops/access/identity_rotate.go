package access

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

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
// context's env when "") by a new one, in every vault the old one opens.
// For the identity file PATH:
//
//  1. a new identity is made beside the old, as PATH.next;
//  2. each vault gets the new key as a recipient;
//  3. PATH.rotation notes the rotation from the old key to the new, the
//     old identity is kept as PATH.old, and the new one takes its place
//     at PATH;
//  4. each vault drops the old key and is re-keyed, so the old identity
//     opens nothing stored after it, and PATH.rotation notes it; then
//     PATH.old is removed, and PATH.rotation.
//
// At every point PATH opens every vault it opened before: the old identity
// until step 3, the new one (which step 2 gave every vault) after. The
// files present say where a rotation stopped (PATH.next: before step 3;
// PATH.rotation without PATH.next: in step 4), and running it again carries on from
// there (without PATH.old too, its old key noted in PATH.rotation), each
// vault opened with whichever identity opens it and each step skipped
// where it is done already. Each file is written whole or not at all. A
// PATH.old that PATH.rotation does not account for is never used or
// removed. Each recipients change and rekey is audited as its verb is.
// One rotation runs at a time in PATH's directory (a lock on the directory
// itself, so none is left behind).
func RotateIdentity(ctx context.Context, s *ops.Service, env string) (IdentityRotation, error) {
	return RotateIdentityAt(ctx, s, env, nil)
}

// RotateIdentityAt is RotateIdentity, calling at (when not nil) after each
// change it makes, with the change's name ("added VAULT", "re-keyed
// VAULT", …); an error from at stops the rotation there, as a crash would.
// It is how the tests stop or kill a rotation at every point.
func RotateIdentityAt(ctx context.Context, s *ops.Service, env string, at func(point string) error) (IdentityRotation, error) {
	if at == nil {
		at = func(string) error { return nil }
	}
	env, err := s.ResolveEnv(env)
	if err != nil {
		return IdentityRotation{}, err
	}
	_, vc, err := s.Config().VaultFor(env)
	if err != nil {
		return IdentityRotation{}, err
	}
	r := &rotation{s: s, at: at, id: vc.Identity, next: vc.Identity + ".next", old: vc.Identity + ".old", journal: vc.Identity + ".rotation"}
	r.res.Path = r.id
	r.envOf = vaultsOpenedWith(s, r.id)
	r.res.Vaults = slices.Sorted(maps.Keys(r.envOf))
	if b, err := fsio.ReadFile(r.id, 64<<10); err == nil && identity.Protected(b) {
		return r.res, ops.Errorf(manifest.OpError, "identity rotation: identity file %s is protected by a passphrase, and a rotation writes the new identity plain: remove the passphrase (arca identity passphrase --remove), rotate, then set it again", r.id)
	}
	ids, err := identity.Load(r.id, nil)
	if err != nil {
		return r.res, ops.Errorf(manifest.OpError, "identity rotation: %v", err)
	}
	if names := identity.Plugins(ids); len(names) > 0 {
		return r.res, ops.Errorf(manifest.OpError, "identity rotation: identity file %s holds an age plugin identity (age-plugin-%s), whose key stays on its device, and a rotation writes a new plain identity in its place: make a new key with the plugin, add its recipient (arca vault recipients add), point the identity at its file, then remove the old recipient", r.id, names[0])
	}
	unlock, err := fsio.LockDir(filepath.Dir(r.id))
	if err != nil {
		return r.res, ops.Errorf(manifest.OpError, "identity rotation: %v", err)
	}
	defer unlock()
	// PATH.next: steps 1 to 3 (with PATH.old too, step 3 stopped between
	// keeping the old identity and putting the new one in place). Else a
	// journal of a rotation to the identity in PATH: step 4, or its end.
	// Else a new rotation, unless a PATH.old is there that is none of
	// arca's.
	j, inStep4 := r.readJournal()
	switch {
	case exists(r.next):
		if err := r.addNew(ctx); err != nil {
			return r.res, err
		}
		j = journal{oldKey: r.res.OldKey, newKey: r.res.NewKey}
	case inStep4:
	case exists(r.old):
		return r.res, ops.Errorf(manifest.OpError, "identity rotation: %s is there, but %s does not say that a rotation from it to %s is under way: it is not one this made; move it aside and run it again", r.old, r.journal, r.id)
	default:
		if err := r.addNew(ctx); err != nil {
			return r.res, err
		}
		j = journal{oldKey: r.res.OldKey, newKey: r.res.NewKey}
	}
	if err := r.dropOld(ctx, j); err != nil {
		return r.res, err
	}
	return r.res, nil
}

// rotation is one run of RotateIdentity.
type rotation struct {
	s             *ops.Service
	at            func(point string) error
	id, next, old string // the identity file, the new identity, the old one kept
	journal       string // the rotation under way from the old to the new, and the vaults re-keyed
	envOf         map[string]string
	res           IdentityRotation
}

// addNew is steps 1 to 3: on return the identity file holds the new
// identity and the old one is kept beside it.
func (r *rotation) addNew(ctx context.Context) error {
	var err error
	if r.res.OldKey, err = publicKey(r.id); err != nil {
		return ops.Errorf(manifest.OpError, "identity rotation: %v", err)
	}
	if !exists(r.next) {
		if err := r.makeNext(); err != nil {
			return err
		}
	}
	if r.res.NewKey, err = publicKey(r.next); err != nil {
		return ops.Errorf(manifest.OpError, "identity rotation: the new identity: %v", err)
	}
	if r.res.NewKey == r.res.OldKey {
		return ops.Errorf(manifest.OpError, "identity rotation: %s holds the identity %s holds; a rotation needs a new one", r.next, r.id)
	}
	if exists(r.old) {
		if key, err := publicKey(r.old); err != nil || key != r.res.OldKey {
			return ops.Errorf(manifest.OpError, "identity rotation: %s, %s and %s are all there, and %s is not a copy of %s: find out which identity each vault needs (arca vault recipients list) before removing any", r.id, r.next, r.old, r.old, r.id)
		}
	}
	withOld, withNew := withIdentity(r.s, r.res.Vaults, r.id), withIdentity(r.s, r.res.Vaults, r.next)
	defer withOld.Close()
	defer withNew.Close()
	for _, name := range r.res.Vaults {
		env := r.envOf[name]
		cur, err := Recipients(ctx, withOld, env)
		if err != nil {
			if _, errNew := Recipients(ctx, withNew, env); errNew == nil {
				continue // it opens with the new identity: given its key already
			}
			return r.stoppedBefore("adding the new key of vault "+strconv.Quote(name), err)
		}
		if !slices.Contains(cur.Recipients, r.res.NewKey) {
			if _, err := ChangeRecipients(ctx, withOld, env, []string{r.res.NewKey}, nil); err != nil {
				return r.stoppedBefore("adding the new key of vault "+strconv.Quote(name), err)
			}
		}
		if err := r.at("added " + name); err != nil {
			return err
		}
	}
	// Every vault must open with the new identity before it takes the
	// identity file's place.
	for _, name := range r.res.Vaults {
		if _, err := Recipients(ctx, withNew, r.envOf[name]); err != nil {
			return r.stoppedBefore("opening vault "+strconv.Quote(name)+" with the new identity", err)
		}
	}
	return r.swap()
}

// makeNext writes a new identity as r.next, whole or not at all.
func (r *rotation) makeNext() error {
	text, _, err := identity.New(r.s.Now())
	if err == nil {
		err = writeFile(r.next, []byte(text))
	}
	if err != nil {
		return ops.Errorf(manifest.OpError, "identity rotation: the new identity: %v", err)
	}
	return r.at("made the new identity")
}

// swap is step 3: the journal says which rotation is under way, the old
// identity is kept as r.old, then the new one takes r.id's place.
func (r *rotation) swap() error {
	b, err := fsio.ReadFile(r.id, 64<<10)
	if err == nil {
		err = writeFile(r.journal, journal{oldKey: r.res.OldKey, newKey: r.res.NewKey}.text(nil))
	}
	if err == nil {
		err = writeFile(r.old, b)
	}
	if err != nil {
		return r.stoppedBefore("keeping the old identity as "+r.old, err)
	}
	if err := r.at("kept the old identity"); err != nil {
		return err
	}
	if err := os.Rename(r.next, r.id); err != nil {
		return r.stoppedBefore("replacing the identity file", err)
	}
	if err := fsio.SyncDir(filepath.Dir(r.id)); err != nil {
		return r.stoppedAfter("replacing the identity file", err)
	}
	return r.at("replaced the identity file")
}

// dropOld is step 4 of the rotation j notes: r.id holds the new
// identity, r.old (unless it was removed) the old one.
func (r *rotation) dropOld(ctx context.Context, j journal) error {
	r.res.OldKey, r.res.NewKey = j.oldKey, j.newKey
	hasOld := exists(r.old)
	if hasOld {
		if key, err := publicKey(r.old); err != nil || key != j.oldKey {
			return ops.Errorf(manifest.OpError, "identity rotation: %s is there, but %s says the rotation under way is from %s: it is not one this made; move it aside and run it again", r.old, r.journal, j.oldKey)
		}
	}
	done := j.done
	withNew, withOld := withIdentity(r.s, r.res.Vaults, r.id), withIdentity(r.s, r.res.Vaults, r.old)
	defer func() { withNew.Close() }()
	defer withOld.Close()
	for _, name := range r.res.Vaults {
		env := r.envOf[name]
		cur, err := Recipients(ctx, withNew, env)
		if err != nil {
			// A vault the old identity alone opens (one configured since
			// the rotation began, say) gets the new key first.
			if !hasOld {
				return r.stoppedAfter("opening vault "+strconv.Quote(name), err)
			}
			if _, errOld := Recipients(ctx, withOld, env); errOld != nil {
				return r.stoppedAfter("opening vault "+strconv.Quote(name), err)
			}
			if err := ensureRecipient(ctx, withOld, env, r.res.NewKey); err != nil {
				return r.stoppedOldOnly(name, err)
			}
			withNew.Close()
			withNew = withIdentity(r.s, r.res.Vaults, r.id)
			if cur, err = Recipients(ctx, withNew, env); err != nil {
				return r.stoppedOldOnly(name, err)
			}
		}
		if slices.Contains(cur.Recipients, r.res.OldKey) {
			if _, err := ChangeRecipients(ctx, withNew, env, nil, []string{r.res.OldKey}); err != nil {
				return r.stoppedAfter("removing the old key of vault "+strconv.Quote(name), err)
			}
			if err := r.at("removed the old key of " + name); err != nil {
				return err
			}
		} else if slices.Contains(done, name) {
			continue
		}
		if _, err := Rekey(ctx, withNew, env); err != nil {
			return r.stoppedAfter("re-keying vault "+strconv.Quote(name), err)
		}
		if err := r.at("re-keyed " + name); err != nil {
			return err
		}
		done = append(done, name)
		if err := writeFile(r.journal, j.text(done)); err != nil {
			return r.stoppedAfter("noting that vault "+strconv.Quote(name)+" was re-keyed", err)
		}
		if err := r.at("noted " + name); err != nil {
			return err
		}
	}
	if err := os.Remove(r.old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r.stoppedAfter("removing the old identity", err)
	}
	if err := fsio.SyncDir(filepath.Dir(r.id)); err != nil {
		return ops.Errorf(manifest.OpError, "identity rotation: sync %s: %v", filepath.Dir(r.id), err)
	}
	if err := r.at("removed the old identity"); err != nil {
		return err
	}
	return r.cleanUp()
}

// cleanUp removes what a finished rotation leaves.
func (r *rotation) cleanUp() error {
	for _, p := range []string{r.journal, r.journal + ".tmp", r.old + ".tmp", r.next + ".tmp"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ops.Errorf(manifest.OpError, "identity rotation: the rotation is done, but %v", err)
		}
	}
	return nil
}

// stoppedBefore is a stop in steps 1 to 3, before the new identity took
// r.id's place: r.id holds the old identity, r.next the new one, which
// vaults may have been given.
func (r *rotation) stoppedBefore(step string, err error) error {
	return ops.Errorf(ops.CodeOf(err), "identity rotation stopped at %s: %v; %s still holds the old identity and %s the new one: keep both and run arca identity rotate again to carry on",
		step, err, r.id, r.next)
}

// stoppedAfter is a stop in step 4: r.id holds the new identity, which
// every vault was given; r.old is the old one, whose key some vaults still
// list.
func (r *rotation) stoppedAfter(step string, err error) error {
	if !exists(r.old) {
		return ops.Errorf(ops.CodeOf(err), "identity rotation stopped at %s: %v; %s holds the new identity (%s, the old one, was removed): keep it and run arca identity rotate again to carry on",
			step, err, r.id, r.old)
	}
	return ops.Errorf(ops.CodeOf(err), "identity rotation stopped at %s: %v; %s holds the new identity and %s the old one: keep both and run arca identity rotate again to carry on",
		step, err, r.id, r.old)
}

// stoppedOldOnly is a stop in step 4 at a vault only the old identity
// opens.
func (r *rotation) stoppedOldOnly(name string, err error) error {
	return ops.Errorf(ops.CodeOf(err), "identity rotation stopped at adding the new key of vault %q: %v; %s holds the new identity and %s the old one, which alone opens vault %q: keep both and run arca identity rotate again to carry on",
		name, err, r.id, r.old, name)
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
