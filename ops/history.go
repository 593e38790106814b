package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// The reads of versions and history (SPEC §11): get of a version, history,
// list with deleted and changes. Their writes are in historywrites.go.

// versionOf is version v of name as st keeps it: not_found (naming v)
// when it is not kept, and while the name is soft-deleted, until undelete.
func versionOf(ctx context.Context, st vault.Store, name string, v uint64) (vault.Record, error) {
	ch, err := st.Chain(ctx, name)
	if err != nil {
		return vault.Record{}, err
	}
	if ch.Deleted() {
		return vault.Record{}, vault.ErrNotFound // removed: undelete first
	}
	rec, ok := ch.Find(v)
	if !ok {
		return vault.Record{}, &vault.VersionNotFoundError{Versions: []uint64{v}}
	}
	return rec, nil
}

func (s *Service) history(ctx context.Context, cv call, _ Request) (Result, error) {
	c := &cv
	st, err := s.store(c.env)
	var ch vault.Chain
	if err == nil {
		ch, err = st.Chain(ctx, c.ref.Path())
	}
	if err == nil && !ch.Known() {
		err = vault.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(c, s.vaultErr(c, err))
	}
	h, err := s.historyOf(c.env)
	if err != nil {
		return nil, s.fail(c, err)
	}
	ch, _ = vault.Expire(ch, h, s.now()) // past keep_deleted, as its next write or check leaves it
	res := HistoryResult{Ref: c.ref.Canonical(), Env: c.env, MaxVersions: h.MaxVersions, Versions: make([]HistoryVersion, 0, len(ch.Previous)+1), DeletedAt: Time{ch.DeletedAt}, Decision: c.decision()}
	if ch.HasCurrent {
		cur := ch.Current.Version
		res.Current = &cur
	}
	for st, r := range ch.All() {
		res.Versions = append(res.Versions, HistoryVersion{Version: r.Version, State: string(st), CreatedAt: Time{r.UpdatedAt}})
	}
	if err := s.record(c, ch.CurrentVersion()); err != nil {
		return nil, err
	}
	return res, nil
}

// historyOf is the history settings of env's vault: as its store was
// opened with them, or from the config.
func (s *Service) historyOf(env string) (vault.History, error) {
	s.mu.Lock()
	h, ok := s.hist[env]
	s.mu.Unlock()
	if ok {
		return h, nil
	}
	_, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return vault.History{}, err
	}
	return vc.HistorySettings(), nil
}

// HistoryDocs returns the history settings of each env's vault, by env,
// as the manifest's history capability shows them; an env whose vault
// does not resolve is left out.
func (c *Config) HistoryDocs() map[string]manifest.HistoryDoc {
	out := map[string]manifest.HistoryDoc{}
	for _, env := range c.EnvNames() {
		if _, vc, err := c.VaultFor(env); err == nil {
			h := vc.HistorySettings()
			out[env] = manifest.HistoryDoc{MaxVersions: h.MaxVersions, KeepDeletedSeconds: int64(h.KeepDeleted.Seconds())}
		}
	}
	return out
}

// withDeleted is metas, a vault's list, with its soft-deleted names
// merged in, sorted by name: those still within keep_deleted (one past it
// is erased by its next write or check, and shown as such).
func (s *Service) withDeleted(ctx context.Context, env string, st vault.Store, metas []vault.Meta) ([]vault.Meta, error) {
	deleted, err := st.ListDeleted(ctx)
	if err != nil || len(deleted) == 0 {
		return metas, err
	}
	h, err := s.historyOf(env)
	if err != nil {
		return nil, err
	}
	now := s.now()
	deleted = slices.DeleteFunc(deleted, func(m vault.Meta) bool {
		return m.Touch != nil && now.Sub(m.Touch.DeletedAt) >= h.KeepDeleted
	})
	out := slices.Concat(metas, deleted)
	slices.SortStableFunc(out, func(a, b vault.Meta) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// listRecord is the list row of m: with deleted_at when m is a
// soft-deleted name's.
func listRecord(m vault.Meta) ListRecord {
	r := ListRecord{Ref: "arca://" + m.Name, Version: m.Version, Stamp: stampOf(m)}
	if m.Touch != nil {
		r.DeletedAt = Time{m.Touch.DeletedAt}
	}
	return r
}

func (s *Service) changes(ctx context.Context, cv call, req Request) (Result, error) {
	c := &cv
	st, err := s.store(c.env)
	var ch vault.Changes
	if err == nil {
		ch, err = st.Changes(ctx, req.Since, vault.MaxChanges)
	}
	if errors.Is(err, vault.ErrBadCursor) {
		err = Errorf(manifest.BadRequest, "since: %v (a cursor is valid only for the env whose changes gave it)", err)
	}
	if err != nil {
		return nil, s.fail(c, s.vaultErr(c, err))
	}
	res := ChangesResult{Env: c.env, Cursor: ch.Cursor, Changes: make([]ChangeRow, 0, len(ch.Changes)), Truncated: ch.Truncated, Reset: ch.Reset, Decision: c.decision()}
	for _, x := range ch.Changes {
		res.Changes = append(res.Changes, ChangeRow{Ref: "arca://" + x.Name, Version: x.Version, State: string(x.State), At: Time{x.At}})
	}
	c.ev.Message = fmt.Sprintf("%d changed", len(res.Changes))
	if err := s.record(c, 0); err != nil {
		return nil, err
	}
	return res, nil
}

// destroyVersions is the versions destroy names: Versions as a door set
// them, or the JSON serve decoded; nil when none were sent (all of
// them). It checks them: 1 to manifest.MaxDestroy versions, each from 1
// to manifest.MaxVersion, none twice.
func (r *Request) destroyVersions() ([]uint64, error) {
	vs := r.Versions
	if vs == nil && r.versions != nil {
		if err := json.Unmarshal(r.versions, &vs); err != nil || vs == nil {
			return nil, Errorf(manifest.BadRequest, "versions must be an array of versions (integers from 1 to %d)", uint64(manifest.MaxVersion))
		}
	}
	if vs == nil {
		return nil, nil
	}
	switch {
	case len(vs) == 0 || len(vs) > manifest.MaxDestroy:
		return nil, Errorf(manifest.BadRequest, "versions must name 1 to %d versions, not %d", manifest.MaxDestroy, len(vs))
	case slices.Contains(vs, 0) || slices.Max(vs) > manifest.MaxVersion:
		return nil, Errorf(manifest.BadRequest, "versions must be integers from 1 to %d", uint64(manifest.MaxVersion))
	case len(slices.Compact(slices.Sorted(slices.Values(vs)))) != len(vs):
		return nil, Errorf(manifest.BadRequest, "versions names a version twice")
	}
	return vs, nil
}

// validateVersions checks the fields of versions and history r sends:
// their bounds (a door that sets them directly is held to what serve's
// decoding holds the wire to), a since sent empty, and destroy's
// versions.
func validateVersions(r *Request) error {
	switch {
	case r.Sent()&manifest.FieldVersion != 0 && (r.Version < 1 || r.Version > manifest.MaxVersion):
		return Errorf(manifest.BadRequest, "version must be an integer from 1 to %d", uint64(manifest.MaxVersion))
	case r.IfVersion != nil && *r.IfVersion > manifest.MaxVersion:
		return Errorf(manifest.BadRequest, "if_version must be an integer from 0 to %d", uint64(manifest.MaxVersion))
	case r.sent&manifest.FieldSince != 0 && r.Since == "":
		return Errorf(manifest.BadRequest, "since is empty (send the cursor a changes result gave, or none)")
	case len(r.Since) > manifest.MaxCursor:
		return Errorf(manifest.BadRequest, "since is longer than %d bytes", manifest.MaxCursor)
	}
	_, err := r.destroyVersions()
	return err
}
