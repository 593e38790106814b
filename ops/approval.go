package ops

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// Approval states, as the approval op, the page and the PDP's input name
// them.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
)

// maxDecided bounds the approvals a session keeps once they are no longer
// pending (decided or expired), oldest dropped first: what the approval
// op and a retry can still find.
const maxDecided = 256

// approval is one approval of a session: what it is for (its key and
// fingerprint, the op, a summary and the PDP's reason), its state, and
// once decided who decided, how and the scope granted; and the grant it
// opened, once one did.
type approval struct {
	id, fingerprint, op string
	summary, reason     string
	key                 grantKey
	expiresAt           time.Time // a pending one expires then
	state               string
	approver, via       string
	scope               pdp.Scope
	grant               *grant // the grant its first allowed retry opened
	claimed             bool   // a retry is opening its grant
}

// ApprovalView is an approval as the approval op and the page show it:
// never a value.
type ApprovalView struct {
	ID, State, Summary, Reason, Fingerprint string
	ExpiresAt                               time.Time
	Approver                                string
	Scope                                   pdp.Scope
}

func (a *approval) view() ApprovalView {
	return ApprovalView{ID: a.id, State: a.state, Summary: a.summary, Reason: a.reason, Fingerprint: a.fingerprint,
		ExpiresAt: a.expiresAt, Approver: a.approver, Scope: a.scope}
}

// input is the approval object of the PDP's input.
func (a *approval) input() *pdp.Approval {
	in := &pdp.Approval{ID: a.id, State: a.state, Approver: a.approver}
	if a.state == ApprovalApproved {
		sc := a.scope
		in.Scope = &sc
	}
	return in
}

// approvals are a session's approvals: by id, and the pending ones by
// fingerprint, so identical requests while one is pending share it.
type approvals struct {
	mu      sync.Mutex
	byID    map[string]*approval
	pending map[string]*approval // by fingerprint
	decided []string             // ids no longer pending, oldest first
	// changed is closed when an approval stops being pending, waking
	// those who wait (AwaitApproval); a new one is made for the next.
	changed chan struct{}
}

// fingerprint is the hex SHA-256 of the JSON array [actor, op, env, ref,
// use] (use: the service's or action's name, "" for an op that is no
// use): what an approval is for, and what a retry must match.
func fingerprint(actor, op, env, ref, use string) string {
	b, _ := json.Marshal([]string{actor, op, env, ref, use}) // strings always encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// lookup returns the approval id names, after expiring those past their
// time (expired: what expire found, for their events).
func (as *approvals) lookup(id string, now time.Time) (a *approval, expired []*approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	expired = as.expireLocked(now)
	return as.byID[id], expired
}

// expire marks the pending approvals past their time expired and returns
// them, for their approval.expire events.
func (as *approvals) expire(now time.Time) []*approval {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.expireLocked(now)
}

func (as *approvals) expireLocked(now time.Time) []*approval {
	var out []*approval
	for fp, a := range as.pending {
		if !now.Before(a.expiresAt) {
			a.state = ApprovalExpired
			delete(as.pending, fp)
			as.retire(a)
			out = append(out, a)
		}
	}
	return out
}

// retire notes that a is no longer pending, dropping the oldest such
// approvals past maxDecided.
func (as *approvals) retire(a *approval) {
	if as.changed != nil {
		close(as.changed)
		as.changed = nil
	}
	as.decided = append(as.decided, a.id)
	for len(as.decided) > maxDecided {
		delete(as.byID, as.decided[0])
		as.decided = as.decided[1:]
	}
}

// ask returns the pending approval for fp, or opens one for a (which
// must carry its fingerprint, key, op, summary and reason); opened says
// it is new. full: MaxPending are pending and none is for fp.
func (as *approvals) ask(a *approval, now time.Time) (got *approval, opened, full bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if p := as.pending[a.fingerprint]; p != nil {
		return p, false, false
	}
	if len(as.pending) >= manifest.MaxPending {
		return nil, false, true
	}
	a.id, a.state, a.expiresAt = newApprovalID(), ApprovalPending, now.Add(manifest.ApprovalWait)
	if as.byID == nil {
		as.byID, as.pending = map[string]*approval{}, map[string]*approval{}
	}
	as.byID[a.id], as.pending[a.fingerprint] = a, a
	return a, true, false
}

// decide records a human's decision on the pending approval id: grant
// with scope, or deny. It fails when id is unknown (not_found) or no
// longer pending (bad_request).
func (as *approvals) decide(id string, grant bool, scope pdp.Scope, approver, via string, now time.Time) (*approval, []*approval, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	expired := as.expireLocked(now)
	a := as.byID[id]
	switch {
	case a == nil:
		return nil, expired, Errorf(manifest.NotFound, "approval %s is not one this session knows", id)
	case a.state != ApprovalPending:
		return nil, expired, Errorf(manifest.BadRequest, "approval %s is %s, not pending: it cannot be decided again", id, a.state)
	}
	a.state, a.approver, a.via = ApprovalDenied, approver, via
	if grant {
		a.state, a.scope = ApprovalApproved, scope
	}
	delete(as.pending, a.fingerprint)
	as.retire(a)
	return a, expired, nil
}

// pendingViews returns the pending approvals, oldest expiry first, after
// expiring those past their time.
func (as *approvals) pendingViews(now time.Time) ([]ApprovalView, []*approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	expired := as.expireLocked(now)
	out := make([]ApprovalView, 0, len(as.pending))
	for _, a := range as.pending {
		out = append(out, a.view())
	}
	sortViews(out)
	return out, expired
}

// fingerprintOf is the fingerprint of the approval id, "" when there is
// none.
func (as *approvals) fingerprintOf(id string) string {
	as.mu.Lock()
	defer as.mu.Unlock()
	if a := as.byID[id]; a != nil {
		return a.fingerprint
	}
	return ""
}

// sortViews sorts approvals by when they expire, then by id.
func sortViews(vs []ApprovalView) {
	slices.SortFunc(vs, func(a, b ApprovalView) int {
		if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// state returns id's view, under the lock.
func (as *approvals) state(id string, now time.Time) (ApprovalView, bool, []*approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	expired := as.expireLocked(now)
	a := as.byID[id]
	if a == nil {
		return ApprovalView{}, false, expired
	}
	return a.view(), true, expired
}

// bind notes that a's first allowed retry opened g, under the lock; a
// grant bound before stays.
func (as *approvals) bind(a *approval, g *grant) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if a.grant == nil {
		a.grant = g
	}
}

// claim reports whether the caller is the first retry of a to open its
// grant: true once, under the lock.
func (as *approvals) claim(a *approval) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	if a.claimed {
		return false
	}
	a.claimed = true
	return true
}

// unclaim undoes a claim that opened no grant.
func (as *approvals) unclaim(a *approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if a.grant == nil {
		a.claimed = false
	}
}

// snapshot returns a's state and the grant it opened, under the lock.
func (as *approvals) snapshot(a *approval) (string, *grant, *pdp.Approval) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return a.state, a.grant, a.input()
}

// newApprovalID returns "ap_" and 16 bytes of crypto/rand in hex.
func newApprovalID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return "ap_" + hex.EncodeToString(b[:])
}

// validID reports whether id is prefix and 32 lowercase hex digits.
func validID(id, prefix string) bool {
	if len(id) != len(prefix)+32 || id[:len(prefix)] != prefix {
		return false
	}
	for _, c := range []byte(id[len(prefix):]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
