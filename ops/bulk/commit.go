package bulk

import (
	"context"
	"errors"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// Messages of the events of the names a restore brings back without a
// current record.
const (
	msgDeleted = "restored soft-deleted"
	msgErased  = "restored: its highest version only, every version erased"
)

// commitBulk applies the writes of p as one batch into env's store st.
// Each unit's events are written, and flushed, before the unit commits; a
// unit whose commit then fails gets an error event for every write in it.
// An item takes its version when its write is approved, and loses it again
// if the write does not land. A name restored without a current record
// that the vault already knew is left as the vault holds it: skipped,
// without an event.
func commitBulk(ctx context.Context, s *ops.Service, st vault.Store, p *bulkPlan, env string) error {
	approved := 0
	var auditErr error
	var flipped []int // writes whose overwrite became a create when approved
	landed, err := st.ApplyBatch(ctx, p, func(ms []vault.Meta) error {
		last := -1 // the last write of the run that gets an event: it flushes them
		for j, m := range ms {
			switch i := p.todo[approved+j]; {
			case p.actions[i] == ActionCreate && !m.Created:
				return ops.Errorf(manifest.OpError, "%s%s was created by another writer during the import; nothing more was written: run it again", ref.Scheme, p.ref(approved+j))
			case p.actions[i] != ActionDeleted || m.Created:
				last = j
			}
		}
		for j, m := range ms {
			i := p.todo[approved+j]
			if p.actions[i] == ActionDeleted && !m.Created {
				p.actions[i] = ActionSkip // the vault knows the name: it keeps its own
				continue
			}
			ch := s.Begin("put", env, p.ref(approved+j), p.message(approved+j))
			write := ch.Record
			if j == last {
				write = ch.Audit
			}
			if err := write(m.Version); err != nil {
				approved += j // written, and now not to be committed
				auditErr = err
				return auditErr
			}
			p.versions[i] = p.version(approved+j, m)
			if m.Created && p.actions[i] == ActionOverwrite {
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
	return failedBulk(s, p, env, landed, approved, err)
}

// message is the message of write j's event: none for a write of a
// current record.
func (p *bulkPlan) message(j int) string {
	it := p.items.At(int(p.todo[j]))
	switch {
	case it.current():
		return ""
	case len(it.Chain.Previous) > 0:
		return msgDeleted
	}
	return msgErased
}

// version is the version write j leaves, as its row shows it: for a name
// restored without a current record, the version rm removed, or its
// highest when none is kept.
func (p *bulkPlan) version(j int, m vault.Meta) uint64 {
	if it := p.items.At(int(p.todo[j])); !it.current() && m.Version == 0 {
		return it.Chain.Highest
	}
	return m.Version
}

// failedBulk writes an error event for every approved write past what
// landed (audited, not or not surely committed) and returns the error of
// the bulk write that failed with err.
func failedBulk(s *ops.Service, p *bulkPlan, env string, landed, approved int, err error) error {
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
