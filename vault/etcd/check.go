package etcd

import (
	"context"
	"fmt"

	"github.com/arca-secrets/arca/vault"
)

// Check implements vault.Store: which members answer and who leads, that the
// identity unwraps the data key, and that every record authenticates and
// sits in the slot its name hashes to. What it finds healthy is in Info.
func (e *Vault) Check(ctx context.Context) (vault.Report, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	var rep vault.Report
	if !e.checkMembers(ctx, &rep) {
		return rep, nil
	}
	if err := e.loadHeader(ctx); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.Info = append(rep.Info, fmt.Sprintf("the identity unwraps the data key (%d recipients)", len(e.hdr.Recipients)))
	kvs, err := e.records(ctx)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.Records = len(kvs)
	for _, kv := range kvs {
		slot := e.slotOf(kv)
		r, err := e.open(slot, "", kv)
		switch {
		case err != nil:
			rep.Problems = append(rep.Problems, err.Error())
		case e.k.Slot(r.Name) != slot:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: record %s: stored in the wrong slot", e.where(), slot))
		}
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
		case err != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("etcd member %s does not answer: %v", ep, err))
		case st.Leader == 0:
			rep.Problems = append(rep.Problems, fmt.Sprintf("etcd member %s answers but the cluster has no leader", ep))
		default:
			ok = true
			role := "follower"
			if st.Leader == st.Header.MemberId {
				role = "leader"
			}
			rep.Info = append(rep.Info, fmt.Sprintf("etcd member %s (%x, %s, etcd %s) answers; leader %x", ep, st.Header.MemberId, role, st.Version, st.Leader))
		}
	}
	if !ok {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: no member answers with a leader", e.where()))
	}
	return ok
}
