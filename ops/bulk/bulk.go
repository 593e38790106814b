// Package bulk is what the CLI does to many records at once: import
// (arca migrate), export, vault backup and restore, and the check of a
// backup, with the compact items a migration is packed into. It runs over
// ops: every record passes ops' guardrails and gets its own event, each
// audited step an ops.Change, so the events keep SPEC §8's order. arca
// serve does not link it (nor the parsers of ops/secretfile it reads).
package bulk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// Request is a bulk write into one env's vault.
type Request struct {
	Env       string // "" for the process context's
	Source    string // what the items were read from, for messages ("secrets.env", "backup FILE")
	Items     Items
	Overwrite bool // replace records that exist; else they are skipped
	DryRun    bool // plan only: nothing is written
}

// Action is what a bulk write does to a record.
type Action uint8

// Actions a bulk write takes on a record.
const (
	ActionCreate Action = iota
	ActionOverwrite
	ActionSkip // it exists and Overwrite was not asked for
)

// String is "create", "overwrite" or "skip".
func (a Action) String() string {
	switch a {
	case ActionCreate:
		return "create"
	case ActionOverwrite:
		return "overwrite"
	}
	return "skip"
}

// Row is what a bulk write does, or would do, to one record.
type Row struct {
	Ref     string // "ns/name", the item's
	Version uint64 // after the write; 0 on a dry run and for a skip
	Action  Action
}

// Result is a bulk write's plan, or what it did.
type Result struct {
	Env    string
	Rows   []Row // in the order of the items
	DryRun bool
}

// Count returns how many rows took action a.
func (r Result) Count(a Action) int {
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
func Import(ctx context.Context, s *ops.Service, req Request) (Result, error) {
	env, err := s.ResolveEnv(req.Env)
	if err != nil {
		return Result{}, err
	}
	res := Result{Env: env, DryRun: req.DryRun}
	if err := bulkCheck(s, env, "put", req.Source, req.Items); err != nil {
		return res, err
	}
	// The plan says which records exist: as much as a list does.
	if reason, denied := s.Config().Guardrail(env, "list", "", ""); denied {
		return res, s.Begin("list", env, "", "").Fail(ops.Errorf(manifest.Denied, "denied by guardrail: %s (a bulk write lists the vault first); nothing was written", reason))
	}
	st, err := s.Store(env)
	if err != nil {
		return res, err
	}
	metas, err := st.List(ctx)
	if err != nil {
		return res, ops.AsError(err)
	}
	exists := make(map[string]bool, len(metas))
	for _, m := range metas {
		exists[m.Name] = true
	}
	p := plan(req.Items, exists, req.Overwrite)
	if req.DryRun {
		res.Rows = p.rows()
		return res, s.Begin("list", env, "", "").Record(0)
	}
	err = commitBulk(ctx, s, st, p, env)
	res.Rows = p.rows()
	return res, err
}

// bulkPlan is what a bulk write does to each of its items, held
// compactly (nine bytes an item) until the write is done and the rows of
// its result are made. It is the vault.Batch of the items it writes.
type bulkPlan struct {
	items    Items
	actions  []Action
	versions []uint64 // after the write
	todo     []int32  // the items written, in order
}

// plan plans the write of items into a vault holding exists.
func plan(items Items, exists map[string]bool, overwrite bool) *bulkPlan {
	n := items.Len()
	p := &bulkPlan{items: items, actions: make([]Action, n), versions: make([]uint64, n), todo: make([]int32, 0, n)}
	for i := range n {
		ref := items.At(i).Ref
		switch {
		case exists[ref] && !overwrite:
			p.actions[i] = ActionSkip
			continue
		case exists[ref]:
			p.actions[i] = ActionOverwrite
		}
		p.todo = append(p.todo, int32(i))
	}
	return p
}

func (p *bulkPlan) Len() int { return len(p.todo) }

func (p *bulkPlan) At(i int) vault.Write { return bulkWrite(p.items.At(int(p.todo[i]))) }

// ref is the ref of write i.
func (p *bulkPlan) ref(i int) string { return p.items.At(int(p.todo[i])).Ref }

// rows is the rows of the result, in the order of the items.
func (p *bulkPlan) rows() []Row {
	rows := make([]Row, len(p.actions))
	for i := range rows {
		rows[i] = Row{Ref: p.items.At(i).Ref, Action: p.actions[i], Version: p.versions[i]}
	}
	return rows
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
// where in source it was read); denied items are each audited and refuse
// it too. It keeps nothing per item: a bulk request's memory is its items.
func bulkCheck(s *ops.Service, env, op, source string, items Items) error {
	if _, _, err := s.Config().VaultFor(env); err != nil {
		return err // the vault could never be opened
	}
	n := items.Len()
	first, again := firstRepeat(items)
	var denied []string
	for i := range n {
		it := items.At(i)
		_, err := ops.ParseRef(ref.Scheme + it.Ref)
		if err == nil && op == "put" {
			err = ops.ValidateValue(it.Value)
		}
		if err == nil && i == again {
			err = fmt.Errorf("also given at %s", where(source, items.At(first).Where))
		}
		if err != nil {
			return ops.Errorf(manifest.BadRequest, "%s: %s: %v; nothing was written", where(source, it.Where), it.Ref, err)
		}
		if reason, no := s.Config().Guardrail(env, op, it.Ref, ""); no {
			denied = append(denied, ref.Scheme+it.Ref)
			if err := s.Begin(op, env, it.Ref, "").Fail(ops.Errorf(manifest.Denied, "denied by guardrail: %s", reason)); !isCode(err, manifest.Denied) {
				return err
			}
		}
	}
	if len(denied) > 0 {
		nothing := "nothing was written"
		if op == "get" {
			nothing = "nothing was printed"
		}
		return ops.Errorf(manifest.Denied, "%d of %d records denied by guardrails (first %s); %s", len(denied), n, denied[0], nothing)
	}
	return nil
}

// firstRepeat finds the first item whose ref an item before it has: again
// is its index, first the earlier one's; again is -1 when every ref is
// given once. It sorts the items' indexes by ref, which costs a fraction
// of a map of the refs.
func firstRepeat(items Items) (first, again int) {
	idx := make([]int32, items.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(items.At(int(a)).Ref, items.At(int(b)).Ref); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	first, again = -1, -1
	for g, k := 0, 1; k < len(idx); k++ {
		if items.At(int(idx[k])).Ref != items.At(int(idx[g])).Ref {
			g = k
			continue
		}
		if k == g+1 && (again < 0 || int(idx[k]) < again) {
			first, again = int(idx[g]), int(idx[k])
		}
	}
	return first, again
}

// where is the place an item was read: where in source, or source.
func where(source, in string) string {
	if in == "" {
		return source
	}
	return source + ": " + in
}

func isCode(err error, c manifest.Code) bool { return err != nil && ops.CodeOf(err) == c }

// commitBulk applies the writes of p as one batch into env's store st.
// Each unit's events are written, and flushed, before the unit commits; a
// unit whose commit then fails gets an error event for every write in it.
// An item takes its version when its write is approved, and loses it again
// if the write does not land.
func commitBulk(ctx context.Context, s *ops.Service, st vault.Store, p *bulkPlan, env string) error {
	approved := 0
	var auditErr error
	var flipped []int // writes whose overwrite became a create when approved
	landed, err := st.ApplyBatch(ctx, p, func(ms []vault.Meta) error {
		for j, m := range ms {
			if i := p.todo[approved+j]; p.actions[i] == ActionCreate && !m.Created {
				return ops.Errorf(manifest.OpError, "%s%s was created by another writer during the import; nothing more was written: run it again", ref.Scheme, p.ref(approved+j))
			}
		}
		for j, m := range ms {
			ch := s.Begin("put", env, p.ref(approved+j), "")
			write := ch.Record
			if j == len(ms)-1 {
				write = ch.Audit
			}
			if err := write(m.Version); err != nil {
				approved += j // written, and now not to be committed
				auditErr = err
				return auditErr
			}
			i := p.todo[approved+j]
			p.versions[i] = m.Version
			if m.Created && p.actions[i] != ActionCreate {
				p.actions[i] = ActionCreate // planned as an overwrite, the record went meanwhile
				flipped = append(flipped, approved+j)
			}
		}
		approved += len(ms)
		return nil
	})
	for j := landed; j < p.Len(); j++ {
		p.versions[p.todo[j]] = 0
	}
	for _, j := range flipped {
		if j >= landed { // not landed: back to what was planned
			p.actions[p.todo[j]] = ActionOverwrite
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
	for j := landed; j < approved; j++ {
		name := p.ref(j)
		if ferr := s.Begin("put", env, name, "").Fail(ops.Errorf(manifest.OpError, "put of %s%s %s: %v", ref.Scheme, name, what, err)); errors.Is(ferr, ops.ErrAudit) {
			return ferr
		}
	}
	if landed > 0 {
		return ops.Errorf(manifest.OpError, "%d of %d records were written before it failed: %v", landed, p.Len(), err)
	}
	return ops.AsError(err)
}
