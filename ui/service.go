package ui

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// ServiceHistories reads names' versions from the vaults of an
// ops.Service as arca history and arca list --deleted do: the guardrails
// of history (a name's versions, which a rule on get of the name covers)
// or list (the deleted names) apply, and each read is audited (a history
// event of the name, with its current version; a list event whose message
// says it listed the deleted names).
// A name's chain holds its values: it is reduced to its versions'
// metadata in the function that reads it, and nothing else of it is kept.
type ServiceHistories struct{ Service *ops.Service }

// History implements Histories.
func (h ServiceHistories) History(ctx context.Context, env, refText string) (History, error) {
	r, err := ops.ParseRef(refText)
	if err != nil {
		return History{}, h.Service.Begin("history", env, "", "").Fail(err)
	}
	if r.Env != "" {
		env = r.Env
	}
	if env, err = h.Service.ResolveEnv(env); err != nil {
		return History{}, err
	}
	name := r.Path()
	ch := h.Service.Begin("history", env, name, "")
	for _, op := range [...]string{"history", "get"} {
		if reason, denied := h.Service.Config().Guardrail(env, op, name, ""); denied {
			return History{}, ch.Fail(ops.Errorf(manifest.Denied, "denied by guardrail: %s", reason))
		}
	}
	st, err := h.Service.Store(env)
	if err != nil {
		return History{}, ch.Fail(err)
	}
	c, err := st.Chain(ctx, name)
	if errors.Is(err, vault.ErrNotFound) {
		return History{}, ch.Fail(ops.Errorf(manifest.NotFound, "%s not found in env %s", r.Canonical(), env))
	}
	if err != nil {
		return History{}, ch.Fail(ops.AsError(err))
	}
	out := historyOf(env, r.Canonical(), &c)
	return out, ch.Record(c.CurrentVersion())
}

// historyOf is what the page shows of c: its versions' numbers, states and
// times, never a value.
func historyOf(env, ref string, c *vault.Chain) History {
	h := History{Env: env, Ref: ref, DeletedAt: stamp(c.DeletedAt)}
	if c.HasCurrent {
		v := c.Current.Version
		h.Current = &v
	}
	for _, v := range c.Versions() {
		h.Versions = append(h.Versions, Version{Version: v.Version, State: string(v.State), WrittenAt: stamp(v.UpdatedAt)})
	}
	return h
}

// Deleted implements Histories.
func (h ServiceHistories) Deleted(ctx context.Context, env string) (DeletedList, error) {
	env, err := h.Service.ResolveEnv(env)
	if err != nil {
		return DeletedList{}, err
	}
	ch := h.Service.Begin("list", env, "", "deleted names")
	if reason, denied := h.Service.Config().Guardrail(env, "list", "", ""); denied {
		return DeletedList{}, ch.Fail(ops.Errorf(manifest.Denied, "denied by guardrail: %s", reason))
	}
	st, err := h.Service.Store(env)
	if err != nil {
		return DeletedList{}, ch.Fail(err)
	}
	ms, err := st.ListDeleted(ctx)
	if err != nil {
		return DeletedList{}, ch.Fail(ops.AsError(err))
	}
	out := DeletedList{Env: env, Deleted: make([]Deleted, 0, len(ms))}
	for _, m := range ms {
		d := Deleted{Ref: ref.Scheme + m.Name, Version: m.Version}
		if m.Touch != nil {
			d.DeletedAt = stamp(m.Touch.DeletedAt)
		}
		out.Deleted = append(out.Deleted, d)
	}
	return out, ch.Record(0)
}
