package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/vault"
)

// Check implements vault.Store: which members answer and who leads, that the
// identity unwraps the data key, and that every name's chain authenticates
// (its current record and every kept version) and sits in the slot its
// name hashes to (read in pages at one revision, see eachPage). What it
// finds healthy is in Info. The soft-deleted names past keep_deleted are
// then erased (eraseExpired: Erased); Versions counts the earlier versions
// kept once those erases landed.
func (e *Vault) Check(ctx context.Context) (vault.Report, error) {
	e.lockForBulk()
	defer e.mu.Unlock()
	var rep vault.Report
	hctx, cancel := e.deadline(ctx)
	defer cancel()
	if !e.checkMembers(hctx, &rep) {
		return rep, nil
	}
	if err := e.loadHeader(hctx); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.Info = append(rep.Info, fmt.Sprintf("the identity unwraps the data key (%d recipients)", len(e.hdr.Recipients)))
	var bad problems
	var expired []expiredName
	now := e.now().UTC()
	err := e.eachRecord(ctx, func() { rep.Records, rep.Versions, bad, expired = 0, 0, problems{}, nil }, func(slot string, kv *mvccpb.KeyValue) error {
		c, err := e.openChain(e.k, slot, "", kv)
		switch {
		case err != nil:
			rep.Records++
			bad.add(err.Error())
			return nil
		case e.k.Slot(c.Name) != slot:
			rep.Records++
			bad.add(fmt.Sprintf("%s: record %s: stored in the wrong slot", e.where(), slot))
			return nil
		}
		if c.HasCurrent {
			rep.Records++
		}
		rep.Versions += len(c.Previous)
		if next, erased := vault.Expire(c, e.history, now); len(erased) > 0 {
			stored, err := e.sealChain(slot, next)
			if err != nil {
				return err
			}
			rep.Versions -= len(erased) // counted back if the erase does not land
			expired = append(expired, expiredName{slot: slot, rev: kv.ModRevision, stored: stored, versions: len(erased)})
		}
		return nil
	})
	rep.Problems = append(rep.Problems, bad.lines()...)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	e.eraseExpired(ctx, expired, &rep)
	return rep, nil
}

// expiredName is a soft-deleted name past keep_deleted that a check
// erases: its slot, its key's mod revision as read, its new value, and
// how many versions that erases.
type expiredName struct {
	slot     string
	rev      int64
	stored   []byte
	versions int
}

// eraseExpired writes the expired names' new values, in units of
// transactions as a batch's, each conditioned on the header and on every
// name's key being as read: a name written since was erased by that
// write (vault.Step erases first), or is no longer deleted. Callers hold
// e.mu.
func (e *Vault) eraseExpired(ctx context.Context, names []expiredName, rep *vault.Report) {
	moved := 0
	for len(names) > 0 {
		n, size := 0, 0
		for n < len(names) && n < maxUnitWrites && (n == 0 || size+len(names[n].stored) <= maxUnitBytes) {
			size += len(names[n].stored)
			n++
		}
		unit := names[:n]
		names = names[n:]
		cmps := make([]clientv3.Cmp, 0, n)
		ops := make([]clientv3.Op, 0, n+2)
		for _, x := range unit {
			key := e.recordKey(x.slot)
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", x.rev))
			ops = append(ops, clientv3.OpPut(key, string(x.stored)))
		}
		err := e.commitUnit(ctx, cmps, ops)
		if err == nil {
			rep.Erased += n
			continue
		}
		for _, x := range unit {
			rep.Versions += x.versions // still kept, or not this check's to count
		}
		if !errors.Is(err, errConflict) {
			for _, x := range names {
				rep.Versions += x.versions
			}
			rep.Problems = append(rep.Problems, fmt.Sprintf("erasing %d names past keep_deleted: %v", n+len(names), err))
			return
		}
		moved += n
	}
	if moved > 0 {
		rep.Info = append(rep.Info, fmt.Sprintf("%d names past keep_deleted were written while the check ran: their writes erase them", moved))
	}
}

// commitUnit commits one unit of a bulk change (commitTxn), on a deadline
// of its own and in a session. Callers hold e.mu.
func (e *Vault) commitUnit(ctx context.Context, cmps []clientv3.Cmp, ops []clientv3.Op) error {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.ensureSession(ctx); err != nil {
		return err
	}
	_, err := e.commitTxn(ctx, true, cmps, ops)
	return err
}

// checkMembers asks every endpoint for its status. It reports whether one
// answered with a leader, which the rest of the check needs.
func (e *Vault) checkMembers(ctx context.Context, rep *vault.Report) bool {
	ok := false
	for _, ep := range e.cli.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, attemptTimeout)
		st, err := e.cli.Status(sctx, ep)
		cancel()
		switch {
		case err != nil && unreached(err):
			// Say why, if a probe can tell (see probe.go).
			why := err.Error()
			if fs := e.probe(ctx, []string{ep}); len(fs) == 1 {
				why = describe(fs)
			}
			rep.Problems = append(rep.Problems, fmt.Sprintf("etcd member %s does not answer: %s", ep, why))
		case err != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("etcd member %s does not answer: %v", ep, e.explain(err, e.prefix)))
		case st.Leader == 0:
			rep.Problems = append(rep.Problems, fmt.Sprintf("etcd member %s answers but the cluster has no leader", ep))
		default:
			ok = true
			role := "follower"
			if st.Leader == st.Header.MemberId {
				role = "leader"
			}
			// The version is the member's own word: quoted when it holds
			// anything but printable text.
			rep.Info = append(rep.Info, fmt.Sprintf("etcd member %s (%x, %s, etcd %s) answers; leader %x", ep, st.Header.MemberId, role, termsafe.Quote(st.Version), st.Leader))
		}
	}
	if !ok {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: no member answers with a leader", e.where()))
	}
	return ok
}

// problems gathers the records a check finds wrong, naming at most
// maxProblems of them: a cluster can hold more records than a report
// should carry lines.
type problems struct {
	named []string
	more  int
}

const maxProblems = 100

func (p *problems) add(line string) {
	if len(p.named) < maxProblems {
		p.named = append(p.named, line)
		return
	}
	p.more++
}

func (p *problems) lines() []string {
	if p.more == 0 {
		return p.named
	}
	return append(p.named, fmt.Sprintf("and %d more records with problems", p.more))
}
