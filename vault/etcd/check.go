package etcd

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/vault"
)

// Check implements vault.Store: which members answer and who leads, that the
// identity unwraps the data key, and that every record authenticates and
// sits in the slot its name hashes to (read in pages at one revision, see
// eachPage). What it finds healthy is in Info.
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
	err := e.eachRecord(ctx, func() { rep.Records, bad = 0, problems{} }, func(slot string, kv *mvccpb.KeyValue) error {
		rep.Records++
		r, err := e.open(slot, "", kv)
		switch {
		case err != nil:
			bad.add(err.Error())
		case e.k.Slot(r.Name) != slot:
			bad.add(fmt.Sprintf("%s: record %s: stored in the wrong slot", e.where(), slot))
		}
		return nil
	})
	rep.Problems = append(rep.Problems, bad.lines()...)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	return rep, nil
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
