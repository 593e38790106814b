package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/serve/approvalpage"
	"github.com/arca-secrets/arca/vault"
)

// Bounds on a session's secret requests, as on its approvals: at most
// maxRequests open at once (pending, or stored and not yet answered), each
// for requestTTL.
const (
	maxRequests = 20
	requestTTL  = 15 * time.Minute
)

// requestKey is what makes two asks one request: the same actor, client,
// env and ref, while it is open.
type requestKey struct{ actor, client, env, ref string }

// secretRequest is one request for a secret nobody stored: what the page
// shows, and once a human stored a value, the put's result. done is
// closed then.
type secretRequest struct {
	view   approvalpage.RequestView
	key    requestKey
	busy   bool // a value is being stored for it
	result ops.PutResult
	done   chan struct{}
}

// requests is a session's secret requests: the page lists and fulfils
// them (approvalpage.Requests), the tool asks and waits. A fulfilled
// request is kept until its result is answered once, or until it would
// have expired.
type requests struct {
	svc  *ops.Service
	ttl  time.Duration // how long a request is open: requestTTL
	stop func(error)   // ends the session: its audit trail failed
	mu   sync.Mutex
	byID map[string]*secretRequest
	open map[requestKey]*secretRequest
}

func newRequests(svc *ops.Service, stop func(error)) *requests {
	return &requests{svc: svc, ttl: requestTTL, stop: stop, byID: map[string]*secretRequest{}, open: map[requestKey]*secretRequest{}}
}

// ask is the open request of k (a stored one is answered, and so
// closed), or a new pending one of description (fresh).
func (q *requests) ask(k requestKey, description string) (v approvalpage.RequestView, stored *ops.PutResult, fresh bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweep()
	if r := q.open[k]; r != nil {
		if r.view.State == "stored" {
			q.drop(r)
			return r.view, &r.result, false, nil
		}
		return r.view, nil, false, nil
	}
	if len(q.byID) >= maxRequests {
		return approvalpage.RequestView{}, nil, false, ops.Errorf(manifest.Denied, "%d secret requests of this session are open: a human must answer one, or one must expire, before another is asked", maxRequests)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	r := &secretRequest{key: k, done: make(chan struct{}), view: approvalpage.RequestView{
		ID: "rq_" + hex.EncodeToString(id), State: "pending", Ref: k.ref, Env: k.env, Description: description,
		Actor: k.actor, Client: k.client, ExpiresAt: q.svc.Now().Add(q.ttl),
	}}
	q.byID[r.view.ID], q.open[k] = r, r
	return r.view, nil, true, nil
}

// wait waits until the request id is stored (its result), expires, or
// ctx ends.
func (q *requests) wait(ctx context.Context, id string) (ops.PutResult, error) {
	q.mu.Lock()
	q.sweep()
	r := q.byID[id]
	q.mu.Unlock()
	if r == nil {
		return ops.PutResult{}, ops.Errorf(manifest.NotFound, "the secret request %s is no longer open: it expired, or its result was answered", id)
	}
	t := time.NewTimer(time.Until(r.view.ExpiresAt))
	defer t.Stop()
	select {
	case <-r.done:
		q.mu.Lock()
		q.drop(r)
		q.mu.Unlock()
		return r.result, nil
	case <-t.C:
		return ops.PutResult{}, ops.Errorf(manifest.OpError, "the secret request %s expired: no one stored a value for %s", id, r.view.Ref)
	case <-ctx.Done():
		return ops.PutResult{}, ops.Errorf(manifest.OpError, "the wait for %s ended: %v", id, ctx.Err())
	}
}

// sweep drops the requests past their time. q.mu is held.
func (q *requests) sweep() {
	now := q.svc.Now()
	for _, r := range q.byID {
		if !now.Before(r.view.ExpiresAt) && !r.busy {
			q.drop(r)
		}
	}
}

// drop forgets r. q.mu is held.
func (q *requests) drop(r *secretRequest) {
	delete(q.byID, r.view.ID)
	if q.open[r.key] == r {
		delete(q.open, r.key)
	}
}

// PendingRequests is the requests a human may store a value for.
func (q *requests) PendingRequests() []approvalpage.RequestView {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweep()
	var vs []approvalpage.RequestView
	for _, r := range q.byID {
		if r.view.State == "pending" {
			vs = append(vs, r.view)
		}
	}
	slices.SortFunc(vs, func(a, b approvalpage.RequestView) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	return vs
}

// Request is the request id as it is.
func (q *requests) Request(id string) (approvalpage.RequestView, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweep()
	r := q.byID[id]
	if r == nil {
		return approvalpage.RequestView{}, false
	}
	return r.view, true
}

// Fulfil stores value for the request id with a put as the asking
// session's actor and client: the guardrails, the PDP and the audit trail
// decide and record it as any put. A refusal leaves the request pending:
// the human sees why, and may store another value until it expires.
func (q *requests) Fulfil(ctx context.Context, id string, value vault.Secret) (approvalpage.RequestView, error) {
	q.mu.Lock()
	q.sweep()
	r := q.byID[id]
	switch {
	case r == nil:
		q.mu.Unlock()
		return approvalpage.RequestView{}, errors.New("no such secret request is open in this session")
	case r.view.State != "pending":
		q.mu.Unlock()
		return r.view, errors.New("this request is " + r.view.State + ": nothing more is stored for it")
	case r.busy:
		q.mu.Unlock()
		return r.view, errors.New("a value for this request is being stored")
	}
	r.busy = true
	k := r.key
	q.mu.Unlock()

	res, err := q.svc.Put(ctx, ops.Request{Op: "put", Ref: k.ref, Env: k.env, Value: value, Actor: k.actor, Client: k.client})
	if errors.Is(err, ops.ErrAudit) {
		q.stop(err) // arca does not act unaudited
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	r.busy = false
	if err != nil {
		return r.view, errors.New("not stored: " + err.Error())
	}
	r.view.State, r.view.Version, r.result = "stored", res.Version, res
	close(r.done)
	return r.view, nil
}
