package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// Item is one record of a bulk write: a migration or a restore.
type Item struct {
	Ref   string // "ns/name"
	Value vault.Secret
	// Meta, for a restore, is the version and times the record keeps; nil
	// for a migration, whose records are put.
	Meta  *vault.Meta
	Where string // where in Source the item was read, for messages ("line 3"); "" when Source says it
}

// BulkRequest is a bulk write into one env's vault.
type BulkRequest struct {
	Env       string // "" for the process context's
	Source    string // what the items were read from, for messages ("secrets.env", "backup FILE")
	Items     []Item
	Overwrite bool // replace records that exist; else they are skipped
	DryRun    bool // plan only: nothing is written
}

// Actions a bulk write takes on a record.
const (
	ActionCreate    = "create"
	ActionOverwrite = "overwrite"
	ActionSkip      = "skip" // it exists and Overwrite was not asked for
)

// BulkRow is what a bulk write does, or would do, to one record.
type BulkRow struct {
	Ref     string // "ns/name", the item's
	Action  string
	Version uint64 // after the write; 0 on a dry run and for a skip
}

// BulkResult is a bulk write's plan, or what it did.
type BulkResult struct {
	Env    string
	Rows   []BulkRow // in the order of the items
	DryRun bool
}

// Count returns how many rows took action a.
func (r BulkResult) Count(a string) int {
	n := 0
	for _, row := range r.Rows {
		if row.Action == a {
			n++
		}
	}
	return n
}

// Import writes items into env's vault as one batch: on the file vault all
// or nothing. Every item is checked (ref, value) and passed through the
// guardrails as a put before anything is written; one denied item refuses
// the whole import. Each record written gets its own put event, written
// before its unit commits.
func (s *Service) Import(ctx context.Context, req BulkRequest) (BulkResult, error) {
	env, err := s.cfg.ResolveEnv("", req.Env, s.ctxEnv)
	if err != nil {
		return BulkResult{}, err
	}
	res := BulkResult{Env: env, DryRun: req.DryRun}
	if err := s.bulkCheck(env, "put", req.Source, req.Items); err != nil {
		return res, err
	}
	// The plan says which records exist: as much as a list does.
	if reason, denied := s.cfg.Guardrail(env, "list", "", ""); denied {
		c := bulkCall(env, "list", "")
		return res, s.fail(&c, Errorf(manifest.Denied, "denied by guardrail: %s (a bulk write lists the vault first); nothing was written", reason))
	}
	st, err := s.store(env)
	if err != nil {
		return res, err
	}
	metas, err := st.List(ctx)
	if err != nil {
		return res, asError(err)
	}
	exists := make(map[string]bool, len(metas))
	for _, m := range metas {
		exists[m.Name] = true
	}
	res.Rows = make([]BulkRow, len(req.Items))
	b := bulkBatch{items: req.Items}
	for i, it := range req.Items {
		row := BulkRow{Ref: it.Ref, Action: ActionCreate}
		switch {
		case exists[it.Ref] && !req.Overwrite:
			row.Action = ActionSkip
		case exists[it.Ref]:
			row.Action = ActionOverwrite
		}
		res.Rows[i] = row
		if row.Action != ActionSkip {
			b.todo = append(b.todo, int32(i))
		}
	}
	if req.DryRun {
		c := &call{op: "list", env: env, ev: audit.Event{Op: "list", Env: env}}
		return res, s.record(c, 0)
	}
	return res, s.commitBulk(ctx, st, b, &res)
}

// bulkBatch is the writes of a bulk request, read from its items: those
// at todo, in order. It holds no copy of them.
type bulkBatch struct {
	items []Item
	todo  []int32
}

func (b bulkBatch) Len() int { return len(b.todo) }

func (b bulkBatch) At(i int) vault.Write { return bulkWrite(b.items[b.todo[i]]) }

// row is the row of write i.
func (b bulkBatch) row(res *BulkResult, i int) *BulkRow { return &res.Rows[b.todo[i]] }

// bulkWrite is the vault write of it: a put, or a restore when it carries
// metadata.
func bulkWrite(it Item) vault.Write {
	if it.Meta != nil {
		return vault.Write{Kind: vault.Restore, Name: it.Ref, Value: it.Value, Meta: *it.Meta}
	}
	return vault.Write{Kind: vault.Put, Name: it.Ref, Value: it.Value}
}

// bulkCheck checks every item and runs the guardrails on it as op. An
// item that fails a check refuses the whole request (bad_request, naming
// where in source it was read); denied items are each audited and refuse
// it too. It keeps nothing per item: a bulk request's memory is its items.
func (s *Service) bulkCheck(env, op, source string, items []Item) error {
	if err := s.canOpen(env); err != nil {
		return err
	}
	seen := make(map[string]int32, len(items))
	var denied []string
	for i, it := range items {
		_, err := ParseRef(ref.Scheme + it.Ref)
		if err == nil && op == "put" {
			err = validateValue(it.Value)
		}
		if j, dup := seen[it.Ref]; err == nil && dup {
			err = fmt.Errorf("also given at %s", where(source, items[j].Where))
		}
		if err != nil {
			return Errorf(manifest.BadRequest, "%s: %s: %v; nothing was written", where(source, it.Where), it.Ref, err)
		}
		seen[it.Ref] = int32(i)
		if reason, no := s.cfg.Guardrail(env, op, it.Ref, ""); no {
			denied = append(denied, ref.Scheme+it.Ref)
			c := bulkCall(env, op, it.Ref)
			if err := s.fail(&c, Errorf(manifest.Denied, "denied by guardrail: %s", reason)); !isCode(err, manifest.Denied) {
				return err
			}
		}
	}
	if len(denied) > 0 {
		nothing := "nothing was written"
		if op == "get" {
			nothing = "nothing was printed"
		}
		return Errorf(manifest.Denied, "%d of %d records denied by guardrails (first %s); %s", len(denied), len(items), denied[0], nothing)
	}
	return nil
}

// where is the place an item was read: where in source, or source.
func where(source, in string) string {
	if in == "" {
		return source
	}
	return source + ": " + in
}

// bulkCall is the call of one record of a bulk request, for its events.
func bulkCall(env, op, path string) call {
	return call{op: op, env: env, ev: audit.Event{Op: op, Env: env, Ref: path}}
}

func isCode(err error, c manifest.Code) bool { return err != nil && CodeOf(err) == c }

// commitBulk applies b as one batch. Each unit's events are written, and
// flushed, before the unit commits; a unit whose commit then fails gets
// an error event for every write in it. A row takes its version when its
// write is approved, and loses it again if the write does not land.
func (s *Service) commitBulk(ctx context.Context, st vault.Store, b bulkBatch, res *BulkResult) error {
	approved := 0
	var auditErr error
	landed, err := st.ApplyBatch(ctx, b, func(ms []vault.Meta) error {
		for j, m := range ms {
			if row := b.row(res, approved+j); row.Action == ActionCreate && !m.Created {
				return Errorf(manifest.OpError, "%s%s was created by another writer during the import; nothing more was written: run it again", ref.Scheme, row.Ref)
			}
		}
		for j, m := range ms {
			row := b.row(res, approved+j)
			ev := audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: res.Env, Ref: row.Ref, Version: m.Version}
			write := s.audit.Write
			if j == len(ms)-1 {
				write = s.audit.WriteFlush
			}
			if err := write(ev); err != nil {
				approved += j // written, and now not to be committed
				auditErr = &Error{Code: manifest.OpError, Msg: "audit event could not be written: " + err.Error(), Err: ErrAudit}
				return auditErr
			}
			row.Version = m.Version
			if m.Created {
				row.Action = ActionCreate
			}
		}
		approved += len(ms)
		return nil
	})
	for j := landed; j < b.Len(); j++ {
		b.row(res, j).Version = 0
	}
	if err == nil {
		return nil
	}
	if auditErr != nil {
		err = auditErr
	}
	// Every approved write past what landed: audited, not (or not surely)
	// committed.
	what := "was audited but not committed"
	if errors.Is(err, vault.ErrUnknownOutcome) {
		what = "was audited, but whether it was committed is unknown"
	}
	for j := landed; j < approved; j++ {
		name := b.row(res, j).Ref
		c := bulkCall(res.Env, "put", name)
		if ferr := s.fail(&c, Errorf(manifest.OpError, "put of %s%s %s: %v", ref.Scheme, name, what, err)); errors.Is(ferr, ErrAudit) {
			return ferr
		}
	}
	if landed > 0 {
		return Errorf(manifest.OpError, "%d of %d records were written before it failed: %v", landed, b.Len(), err)
	}
	return asError(err)
}
