package ops

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/pdp"
)

// Grant states, as the PDP's input and a grant.close event name them.
const (
	grantActive    = "active"
	grantExhausted = "exhausted"
	grantExpired   = "expired"
)

// The bounds of the obligations that open a grant (SPEC §14).
const (
	maxGrantTTL  = 86400
	maxGrantUses = 10000
)

// grantKey is what a grant covers: one actor's use of one ref in one env,
// the use being the op's name (get, put, …) or "http:SERVICE" /
// "exec:ACTION". The session is the Service that holds it.
type grantKey struct{ actor, env, ref, use string }

// grant is one grant: opened by an allow carrying arca:ttl or
// arca:max_uses, never extended, kept once closed so the PDP's next input
// shows how it ended.
type grant struct {
	id        string
	uses      int
	maxUses   int       // 0: unbounded by count
	expiresAt time.Time // zero: unbounded by time
	closed    string    // "" while open; else the state it closed in
}

// stateAt is g's state at now: its closing state once closed, else
// exhausted when its uses are spent, expired once now reaches its end.
func (g *grant) stateAt(now time.Time) string {
	switch {
	case g.closed != "":
		return g.closed
	case g.maxUses > 0 && g.uses >= g.maxUses:
		return grantExhausted
	case !g.expiresAt.IsZero() && !now.Before(g.expiresAt):
		return grantExpired
	}
	return grantActive
}

// grants are a session's grants, by key; the latest for each key.
type grants struct {
	mu sync.Mutex
	m  map[grantKey]*grant
}

// view is the grant object of the PDP's input for key at now; nil when no
// grant was opened for it.
func (gs *grants) view(key grantKey, now time.Time) *pdp.Grant {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.m[key]
	if g == nil {
		return nil
	}
	v := &pdp.Grant{ID: g.id, Uses: g.uses, MaxUses: g.maxUses, State: g.stateAt(now)}
	if !g.expiresAt.IsZero() {
		v.ExpiresAt = string(audit.AppendTime(nil, g.expiresAt))
	}
	return v
}

// grantBounds are the grant an allow's obligations ask for: ttl seconds
// and max uses, 0 when not asked.
type grantBounds struct{ ttl, maxUses int }

func (b grantBounds) opens() bool { return b.ttl > 0 || b.maxUses > 0 }

// openRule says when an allowed request with no active grant opens one.
type openRule int

const (
	openByPDP      openRule = iota // when the allow asks for one ([serve.grants] renew = "pdp")
	openOnce                       // renew = "approval": only the first for its key; after that, an approval's
	openByApproval                 // an approved approval's first allowed retry: always, unbounded when its scope is
)

// settled is what settle decided for one request: the grant it falls
// under ("" none) and its end; the grant found spent or past its time
// and closed (closedID, in state closed); the grant opened; and, under
// openOnce, that an allow asked for a grant an approval must now open.
type settled struct {
	id            string
	expiresAt     time.Time
	closedID      string
	closed        string
	closedNow     bool // the grant closed as this request settled (not before)
	opened        *grant
	needsApproval bool
}

// settle applies the grant rules to one request for key at now, once its
// verdict is known (allowed: an allow arca can fulfil). A grant found
// spent or past its time closes, whatever the verdict; an allowed request
// counts one use of the active grant, or opens a new one as rule says
// when none is active (b bounding it). An active grant is never widened.
// An allow made on a grant shown to the PDP as active (shown, its id)
// that has closed since, spent by the requests settled before it, is
// denied as that grant closed, unless an approval opens a new one.
func (gs *grants) settle(key grantKey, now time.Time, allowed bool, b grantBounds, rule openRule, shown string) settled {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var st settled
	g := gs.m[key]
	if allowed && rule != openByApproval && shown != "" && g != nil && g.id == shown && g.closed != "" {
		return settled{closedID: g.id, closed: g.closed}
	}
	if g != nil && g.closed == "" {
		state := g.stateAt(now)
		switch {
		case state == grantActive && allowed:
			g.uses++
			return settled{id: g.id, expiresAt: g.expiresAt}
		case state == grantActive:
			return settled{}
		}
		g.closed = state
		st.closedID, st.closed, st.closedNow = g.id, state, true
		if rule != openByApproval {
			return st
		}
	}
	switch {
	case !allowed:
		return st
	case rule == openByPDP && !b.opens():
		return st
	case rule == openOnce && !b.opens():
		return st
	case rule == openOnce && g != nil:
		st.needsApproval = true
		return st
	}
	g = gs.openLocked(key, now, b, 1)
	st.id, st.expiresAt, st.opened = g.id, g.expiresAt, g
	return st
}

// openIdle opens a grant for key bounded by b with no use counted, unless
// the key has an open grant: then it returns nil.
func (gs *grants) openIdle(key grantKey, now time.Time, b grantBounds) *grant {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g := gs.m[key]; g != nil && g.closed == "" {
		return nil
	}
	return gs.openLocked(key, now, b, 0)
}

func (gs *grants) openLocked(key grantKey, now time.Time, b grantBounds, uses int) *grant {
	g := &grant{id: newGrantID(), uses: uses, maxUses: b.maxUses}
	if b.ttl > 0 {
		g.expiresAt = now.Add(time.Duration(b.ttl) * time.Second)
	}
	if gs.m == nil {
		gs.m = map[grantKey]*grant{}
	}
	gs.m[key] = g
	return g
}

// closedState is the state g closed in, "" while it is open.
func (gs *grants) closedState(g *grant) string {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return g.closed
}

// newGrantID returns "gr_" and 16 bytes of crypto/rand in hex.
func newGrantID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return "gr_" + hex.EncodeToString(b[:])
}

// grantUse is the use part of a grant's key: op, or "http:SERVICE" /
// "exec:ACTION" for a use.
func grantUse(op string, use *pdp.Use) string {
	if use == nil {
		return op
	}
	return op + ":" + use.Name
}

// parseGrantObligation reads o, an arca:ttl=S or arca:max_uses=N, into
// b; false when it is malformed (digits only, no leading zero), out of
// range or its bound already given.
func parseGrantObligation(o string, b *grantBounds) bool {
	name, val, _ := strings.Cut(o, "=")
	dst, limit := &b.maxUses, maxGrantUses
	if name == manifest.ObligationTTL {
		dst, limit = &b.ttl, maxGrantTTL
	}
	if *dst != 0 || val == "" || val[0] == '0' || len(val) > 5 || strings.Trim(val, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(val)
	if err != nil || n > limit {
		return false
	}
	*dst = n
	return true
}

// writeGrant writes a grant or approval event of c's decision, or holds it to go
// before c's own event when c's event is held (see call.held), so the
// audit chain keeps request order.
func (s *Service) writeGrant(c *call, ev audit.Event) error {
	if c.held != nil {
		c.held.pre = append(c.held.pre, ev)
		return nil
	}
	return s.writeFor(c, ev)
}

// grantRevoked is the state of a grant closed by revoke; grantEnded, of
// one open when serve stopped.
const (
	grantRevoked = "revoked"
	grantEnded   = "ended"
)

// closeMatching closes every open grant whose key match accepts and
// returns them for their events: an active one closes as state (the
// closed, counted), one already spent or past its time as what it is by
// now (the rest).
func (gs *grants) closeMatching(now time.Time, state string, match func(grantKey, *grant) bool) (closed, rest []closedGrant) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for k, g := range gs.m {
		if g.closed != "" || !match(k, g) {
			continue
		}
		if st := g.stateAt(now); st != grantActive {
			g.closed = st
			rest = append(rest, closedGrant{k, g.id, st})
			continue
		}
		g.closed = state
		closed = append(closed, closedGrant{k, g.id, state})
	}
	byKey := func(a, b closedGrant) int { return cmpKeys(a.key, b.key) }
	slices.SortFunc(closed, byKey) // events in an order of their own, not the map's
	slices.SortFunc(rest, byKey)
	return closed, rest
}

// cmpKeys orders grant keys by ref, env, actor and use.
func cmpKeys(a, b grantKey) int {
	return cmp.Or(strings.Compare(a.ref, b.ref), strings.Compare(a.env, b.env), strings.Compare(a.actor, b.actor), strings.Compare(a.use, b.use))
}

// closedGrant is a grant closeMatching closed: its key, id and state.
type closedGrant struct {
	key   grantKey
	id    string
	state string
}
