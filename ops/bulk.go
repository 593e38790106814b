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
	Where string // where the item was read, for messages ("line 3")
}

// BulkRequest is a bulk write into one env's vault.
type BulkRequest struct {
	Env       string // "" for the process context's
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
	Ref     string // "arca://ns/name"
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
	if err := s.bulkCheck(env, "put", req.Items); err != nil {
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
	var ws []vault.Write
	var todo []int // the row of each write
	for i, it := range req.Items {
		row := BulkRow{Ref: ref.Scheme + it.Ref, Action: ActionCreate}
		switch {
		case exists[it.Ref] && !req.Overwrite:
			row.Action = ActionSkip
		case exists[it.Ref]:
			row.Action = ActionOverwrite
		}
		res.Rows = append(res.Rows, row)
		if row.Action != ActionSkip {
			ws, todo = append(ws, bulkWrite(it)), append(todo, i)
		}
	}
	if req.DryRun {
		c := &call{op: "list", env: env, ev: audit.Event{Op: "list", Env: env}}
		return res, s.record(c, 0)
	}
	return res, s.commitBulk(ctx, st, ws, todo, &res)
}

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
// where it was read); denied items are each audited and refuse it too. It
// keeps nothing per item: a bulk request's memory is its items.
func (s *Service) bulkCheck(env, op string, items []Item) error {
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
			err = fmt.Errorf("also given at %s", items[j].Where)
		}
		if err != nil {
			return Errorf(manifest.BadRequest, "%s: %s: %v; nothing was written", it.Where, it.Ref, err)
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

// bulkCall is the call of one record of a bulk request, for its events.
func bulkCall(env, op, path string) call {
	return call{op: op, env: env, ev: audit.Event{Op: op, Env: env, Ref: path}}
}

func isCode(err error, c manifest.Code) bool { return err != nil && CodeOf(err) == c }

// commitBulk applies ws as one batch. Each unit's events are written, and
// flushed, before the unit commits; a unit whose commit then fails gets
// an error event for every write in it. todo is the row of each write.
func (s *Service) commitBulk(ctx context.Context, st vault.Store, ws []vault.Write, todo []int, res *BulkResult) error {
	approved := 0
	var auditErr error
	landed, err := st.ApplyBatch(ctx, ws, func(ms []vault.Meta) error {
		for j, m := range ms {
			i := todo[approved+j]
			if res.Rows[i].Action == ActionCreate && !m.Created {
				return Errorf(manifest.OpError, "%s was created by another writer during the import; nothing more was written: run it again", res.Rows[i].Ref)
			}
		}
		for j, m := range ms {
			ev := audit.Event{Event: "put", Op: "put", Outcome: audit.OK, Env: res.Env, Ref: ws[approved+j].Name, Version: m.Version}
			write := s.audit.Write
			if j == len(ms)-1 {
				write = s.audit.WriteFlush
			}
			if err := write(ev); err != nil {
				approved += j // written, and now not to be committed
				auditErr = &Error{Code: manifest.OpError, Msg: "audit event could not be written: " + err.Error(), Err: ErrAudit}
				return auditErr
			}
		}
		approved += len(ms)
		return nil
	})
	for j, m := range landed {
		res.Rows[todo[j]].Version = m.Version
		if m.Created {
			res.Rows[todo[j]].Action = ActionCreate
		}
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
	for j := len(landed); j < approved; j++ {
		c := bulkCall(res.Env, "put", ws[j].Name)
		if ferr := s.fail(&c, Errorf(manifest.OpError, "put of %s%s %s: %v", ref.Scheme, ws[j].Name, what, err)); errors.Is(ferr, ErrAudit) {
			return ferr
		}
	}
	if len(landed) > 0 {
		return Errorf(manifest.OpError, "%d of %d records were written before it failed: %v", len(landed), len(ws), err)
	}
	return asError(err)
}
