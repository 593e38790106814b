// Package access is who can open a vault: init (the identity and the
// vault), the recipients a vault's data key is wrapped to, rekey, and the
// rotation of an identity through every vault it opens. It runs over ops;
// each recipients change and rekey is an ops.Change, audited before it is
// committed.
package access

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// TeamResult says who can unwrap an env's data key after a team op.
type TeamResult struct {
	Env        string
	Vault      string
	Recipients []string
	Resealed   int // Rekey: records re-sealed under the new key
}

// keyed resolves env (the process context's when "") to a vault whose data
// key can be rewrapped and replaced (both kinds can).
func keyed(s *ops.Service, env string) (TeamResult, vault.Keyed, error) {
	env, name, k, err := s.Keyed(env)
	return TeamResult{Env: env, Vault: name}, k, err
}

// ownRecipient is the public key of the identity env's vault is opened with.
func ownRecipient(s *ops.Service, env string) (string, error) {
	id, err := s.Identity(env)
	return id.PublicKey, err
}

// Recipients lists the age recipients env's data key is wrapped to.
func Recipients(ctx context.Context, s *ops.Service, env string) (TeamResult, error) {
	res, k, err := keyed(s, env)
	if err == nil {
		res.Recipients, err = k.Recipients(ctx)
	}
	return res, ops.AsError(err)
}

// ChangeRecipients wraps env's data key to its recipients plus add minus
// remove. It refuses to leave no recipient, or to drop the identity this
// process opens the vault with (it could not undo that).
func ChangeRecipients(ctx context.Context, s *ops.Service, env string, add, remove []string) (TeamResult, error) {
	res, k, err := keyed(s, env)
	if err != nil {
		return res, err
	}
	cur, err := k.Recipients(ctx)
	if err != nil {
		return res, ops.AsError(err)
	}
	next, err := nextRecipients(s, res.Env, cur, add, remove)
	if err != nil {
		return res, err
	}
	msg := recipientsMessage(add, remove)
	ch := s.Begin("recipients", res.Env, "", msg)
	if err := ch.Audit(0); err != nil {
		return res, err
	}
	rs, err := ops.ParseRecipients("recipients of env "+res.Env, next)
	if err == nil {
		err = k.SetRecipients(ctx, cur, rs)
	}
	if err != nil {
		return res, ch.Fail(ops.Errorf(manifest.OpError, "recipients of env %q were audited but not changed: %v", res.Env, err))
	}
	res.Recipients = next // what landed; reading it back could fail for other reasons
	return res, nil
}

// nextRecipients computes and checks the new recipient list.
func nextRecipients(s *ops.Service, env string, cur, add, remove []string) ([]string, error) {
	for i, r := range append(slices.Clone(add), remove...) {
		if _, err := identity.ParseRecipient(r); err != nil {
			return nil, ops.Errorf(manifest.BadRequest, "recipient argument %d %v", i+1, err)
		}
	}
	next := slices.Clone(cur)
	for _, r := range add {
		if !slices.Contains(next, r) {
			next = append(next, r)
		}
	}
	for _, r := range remove {
		if !slices.Contains(cur, r) {
			return nil, ops.Errorf(manifest.NotFound, "recipient %s is not one of env %q's recipients", r, env)
		}
		next = slices.DeleteFunc(next, func(x string) bool { return x == r })
	}
	own, err := ownRecipient(s, env)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(next, own) {
		return nil, ops.Errorf(manifest.BadRequest, "removing %s would lock out this identity; another recipient must remove it", own)
	}
	return next, nil
}

func recipientsMessage(add, remove []string) string {
	var parts []string
	for _, r := range add {
		parts = append(parts, "add "+r)
	}
	for _, r := range remove {
		parts = append(parts, "remove "+r)
	}
	return strings.Join(parts, "; ")
}

// Rekey replaces env's data key and re-seals every record under it.
func Rekey(ctx context.Context, s *ops.Service, env string) (TeamResult, error) {
	res, k, err := keyed(s, env)
	if err != nil {
		return res, err
	}
	ch := s.Begin("rekey", res.Env, "", "replace the data key and re-seal every record")
	if err := ch.Audit(0); err != nil {
		return res, err
	}
	if res.Resealed, err = k.Rekey(ctx); errors.Is(err, vault.ErrUnknownOutcome) {
		return res, ch.Fail(ops.Errorf(manifest.OpError, "rekey of env %q was audited, but whether it landed is unknown: %v", res.Env, err))
	} else if err != nil {
		return res, ch.Fail(ops.Errorf(manifest.OpError, "rekey of env %q was audited but did not land: %v", res.Env, err))
	}
	if rs, err := k.Recipients(ctx); err == nil {
		res.Recipients = rs // the rekey landed; a failed read back does not undo it
	}
	return res, nil
}

// Service is an ops.Service that also answers Recipients as a method: what
// a caller reading vaults through an interface (the ui's Vaults) is given.
type Service struct{ *ops.Service }

// Recipients lists the age recipients env's data key is wrapped to.
func (s Service) Recipients(ctx context.Context, env string) (TeamResult, error) {
	return Recipients(ctx, s.Service, env)
}
