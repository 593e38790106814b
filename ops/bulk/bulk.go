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
	// ActionDeleted restores a name the backup holds soft-deleted (or only
	// as its highest version, all its versions erased) into a vault that
	// knows nothing of it: undelete brings it back.
	ActionDeleted
)

// String is "create", "overwrite", "skip" or "deleted".
func (a Action) String() string {
	switch a {
	case ActionCreate:
		return "create"
	case ActionOverwrite:
		return "overwrite"
	case ActionDeleted:
		return "deleted"
	}
	return "skip"
}

// Row is what a bulk write does, or would do, to one record.
type Row struct {
	Ref     string // "ns/name", the item's
	Version uint64 // after the write (deleted: the version rm removed, or the highest); 0 on a dry run and for a skip
	Action  Action
	Deleted bool // the backup holds the name without a current record (soft-deleted, or its highest version only)
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
	deleted, err := knownDeleted(ctx, st, req.Items)
	if err != nil {
		return res, ops.AsError(err)
	}
	p := plan(req.Items, exists, deleted, req.Overwrite)
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

// knownDeleted is the names the vault holds soft-deleted, when items hold
// a name without a current record (a restore's deleted names); nil, read
// from nowhere, for a migration.
func knownDeleted(ctx context.Context, st vault.Store, items Items) (map[string]bool, error) {
	n := items.Len()
	i := 0
	for i < n && items.At(i).current() {
		i++
	}
	if i == n {
		return nil, nil
	}
	ms, err := st.ListDeleted(ctx)
	deleted := make(map[string]bool, len(ms))
	for _, m := range ms {
		deleted[m.Name] = true
	}
	return deleted, err
}

// plan plans the write of items into a vault holding the records exists
// and the soft-deleted names deleted. A name a backup holds without a
// current record is restored where the vault knows nothing of it, and
// skipped where it knows the name (Step leaves it as it is); a name the
// vault holds only as its highest version is found so when the write is
// approved, and skipped then. A record the backup holds is restored over
// a name the vault holds soft-deleted. A restore never lowers a version.
func plan(items Items, exists, deleted map[string]bool, overwrite bool) *bulkPlan {
	n := items.Len()
	p := &bulkPlan{items: items, actions: make([]Action, n), versions: make([]uint64, n), todo: make([]int32, 0, n)}
	for i := range n {
		it := items.At(i)
		ref := it.Ref
		switch {
		case !it.current() && (exists[ref] || deleted[ref]):
			p.actions[i] = ActionSkip
			continue
		case !it.current():
			p.actions[i] = ActionDeleted
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
		it := p.items.At(i)
		rows[i] = Row{Ref: it.Ref, Action: p.actions[i], Version: p.versions[i], Deleted: !it.current()}
	}
	return rows
}

// bulkWrite is the vault write of it: a put, or a restore when it carries
// a chain or metadata.
func bulkWrite(it Item) vault.Write {
	if it.Chain != nil {
		return vault.Write{Kind: vault.Restore, Name: it.Ref, Chain: it.Chain}
	}
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
			err = it.eachValue(ops.ValidateValue)
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
