package pdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Persistent mode (Config.Mode = ModePersistent) starts `sh -c <Exec>` once
// and keeps it: each decision writes the request to the child's stdin as
// one JSON line — the request a spawned PDP gets, with one more key,
// "nonce" — and takes the next line of its stdout as the verdict, parsed as
// strictly as a spawned PDP's stdout. Nothing is cached: every decision is
// a request the child answers.
//
// The nonce is 16 bytes of crypto/rand in hex, new for every request, and
// the verdict line must echo it as its own "nonce" key, exactly. A line
// that does not (no nonce, another request's, a stale line repeating an
// earlier verdict) answers no request: it retires the child, and the
// decision it arrived for is unreachable, never the line's verdict. So a
// line is taken as the answer of the request it names, whatever its timing.
// The nonce proves only that: it is no secret (the child reads it) and it
// goes nowhere but the request line.
//
// Decisions may be asked concurrently: requests are written in the order
// they take the write turn, and lines are matched to them in that order
// (pipelined). serve asks the reads of a run at once (serve/reads.go), and
// anything else one at a time.
//
// Bounds, per decision, as for a spawned PDP:
//
//   - Config.Timeout covers the decision from the moment it is asked: the
//     wait for the write turn, the write, and the answer. A decision that
//     misses it kills the child with its whole process group; every
//     decision still waiting on that child is unreachable too, with a
//     reason that says it was another decision's deadline.
//   - A verdict line is at most MaxVerdict bytes before its newline; a
//     longer one kills the child. arca holds one buffer of MaxVerdict+1.
//   - The child's environment is Allowlist(cfg.Environ), its stderr
//     /dev/null, its working directory the caller's.
//
// The child is retired (its group killed, its pipes closed, and it is
// reaped) when it writes a line that is not a valid verdict, a line that
// does not echo its request's nonce, a line over the cap, a line nobody
// asked for (one with no request pending, or a second line for the one
// request pending), when it exits or closes its stdout, when a decision
// misses its deadline, and on Close. The decisions it owed are
// unreachable; a child that fails between decisions makes the next one
// unreachable with the reason. The next decision after that starts a fresh
// child, unless it comes within the backoff (see backoff), in which case
// it is unreachable at once without starting anything.
type persistent struct {
	cfg   Config
	shell string
	now   func() time.Time

	turn chan struct{} // the write turn: one writer at a time, in request order

	mu        sync.Mutex
	cur       *proc // nil: none running
	closed    bool
	owed      string    // why the last child failed between decisions; the next decision reports it
	failures  int       // consecutive failures since the last verdict
	notBefore time.Time // no child starts before this
	lastWhy   string    // why the last child was retired

	// Tests only (nil otherwise), none of which may block; onStart and
	// onOwed are called under mu.
	onStart   func(pgid int) // told each child's group id
	onWritten func()         // told each time a request has been written to the child
	onOwed    func()         // told each time a child fails between decisions
}

// Backoff between restarts: after n consecutive failures no child starts
// for backoffBase·2^(n-1), at most backoffMax. A verdict resets it.
const (
	backoffBase = 20 * time.Millisecond
	backoffMax  = 2 * time.Second
)

// backoff is how long to wait before starting a child after n consecutive
// failures.
func backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

func newPersistent(cfg Config, shell string) *persistent {
	return &persistent{cfg: cfg, shell: shell, now: time.Now, turn: make(chan struct{}, 1)}
}

// result is what a waiting decision gets: a verdict, or why there is none.
type result struct {
	v   Verdict
	why string
}

// waiter is one decision waiting for its line.
type waiter struct {
	ch    chan result // buffered: exactly one send
	nonce string      // the nonce its request carries, which its line must echo
}

// persistentRequest is the request line of a persistent child: the
// request, and the nonce its verdict line must echo, last.
type persistentRequest struct {
	Request
	Nonce string `json:"nonce"`
}

// newNonce returns 16 bytes of crypto/rand in hex.
func newNonce() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return hex.EncodeToString(b[:])
}

// Decide asks the running child, starting one if none runs.
func (d *persistent) Decide(ctx context.Context, req Request) (Verdict, error) {
	if d.cfg.Timeout <= 0 {
		return Verdict{}, unreachable("timeout must be positive")
	}
	if ctx.Err() != nil {
		return Verdict{}, unreachable(doneWhy(ctx, d.cfg.Timeout))
	}
	nonce := newNonce()
	body, err := encodeRequest(persistentRequest{req, nonce})
	if err != nil {
		return Verdict{}, err
	}
	dctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	select {
	case d.turn <- struct{}{}:
	case <-dctx.Done():
		return Verdict{}, unreachable(doneWhy(ctx, d.cfg.Timeout))
	}
	p, w, why := d.enqueue(nonce)
	if why != "" {
		<-d.turn
		return Verdict{}, unreachable(why)
	}
	p.write(body, dctx)
	if d.onWritten != nil {
		d.onWritten()
	}
	<-d.turn
	select {
	case r := <-w.ch:
		if r.why != "" {
			return Verdict{}, unreachable(r.why)
		}
		d.answered()
		return r.v, nil
	case <-dctx.Done():
		// Retire the child with this waiter still queued: taken off the
		// queue first, the answer to this request could reach the next
		// decision before the child is gone. The others queued on it are
		// told whose deadline it was.
		why := doneWhy(ctx, d.cfg.Timeout)
		d.retireWith(p, why, "the decider was retired for another decision ("+why+")", true)
		return Verdict{}, unreachable(why)
	}
}

// enqueue returns the running child (starting one when none runs and the
// backoff allows) with a new waiter at the end of its queue, or why the
// decision cannot be asked.
func (d *persistent) enqueue(nonce string) (*proc, *waiter, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, nil, whyClosed
	case d.owed != "":
		why := d.owed
		d.owed = ""
		return nil, nil, why
	}
	if d.cur == nil {
		if d.now().Before(d.notBefore) {
			return nil, nil, "backing off after a failure (" + d.lastWhy + ")"
		}
		p, err := d.startProc()
		if err != nil {
			d.failedLocked(err.(*Unreachable).Why)
			return nil, nil, err.(*Unreachable).Why
		}
		d.cur = p
	}
	w := &waiter{ch: make(chan result, 1), nonce: nonce}
	d.cur.pending = append(d.cur.pending, w)
	return d.cur, w, ""
}

// answered records a verdict: the child works, so the backoff starts over.
func (d *persistent) answered() {
	d.mu.Lock()
	d.failures = 0
	d.mu.Unlock()
}

// failedLocked counts a failure and sets the backoff. d.mu is held.
func (d *persistent) failedLocked(why string) {
	d.failures++
	d.lastWhy = why
	d.notBefore = d.now().Add(backoff(d.failures))
}

// Close retires the running child, failing the decisions it owed, and
// returns once it is reaped. Decisions after Close are unreachable.
func (d *persistent) Close() error {
	d.mu.Lock()
	d.closed = true
	p := d.cur
	d.mu.Unlock()
	if p != nil {
		d.retire(p, whyClosed, true)
		<-p.done
	}
	return nil
}

// retire ends p once: it stops being the running child, the decisions it
// owed get why, and its group is killed and its pipes closed (the exit
// watcher reaps it). told says a decision has already been given why;
// otherwise a child retired with nothing pending leaves why owed to the
// next decision.
func (d *persistent) retire(p *proc, why string, told bool) {
	d.retireWith(p, why, why, told)
}

// retireWith is retire where the decisions p owed are given owedWhy, and
// why is kept as the failure's reason (the backoff's, or the next
// decision's when nothing was pending).
func (d *persistent) retireWith(p *proc, why, owedWhy string, told bool) {
	d.mu.Lock()
	if p.retired {
		d.mu.Unlock()
		return
	}
	p.retired = true
	pending := p.pending
	p.pending = nil
	if d.cur == p {
		d.cur = nil
		if !d.closed {
			d.failedLocked(why)
			if len(pending) == 0 && !told {
				d.owed = why
				if d.onOwed != nil {
					d.onOwed()
				}
			}
		}
	}
	if !p.reaping {
		p.kill() // under d.mu: the watcher cannot reap until it has the lock
	}
	d.mu.Unlock()
	p.stdin.Close()
	p.stdout.Close()
	for _, w := range pending {
		w.ch <- result{why: owedWhy}
	}
}

// deliver hands line to the oldest pending decision: its verdict when it
// echoes that decision's nonce, otherwise why not. more says whether the
// child had written anything past it. It reports whether p is still in
// service.
func (d *persistent) deliver(p *proc, line []byte, more bool) bool {
	v, nonce, why := parseEcho(line)
	d.mu.Lock()
	if p.retired {
		d.mu.Unlock()
		return false
	}
	if len(p.pending) == 0 {
		d.mu.Unlock()
		d.retire(p, "wrote a line with no request pending", false)
		return false
	}
	w := p.pending[0]
	p.pending = p.pending[1:]
	if why == "" {
		why = echoProblem(nonce, w.nonce, p.answered)
	}
	if why == "" && more && len(p.pending) == 0 {
		why = "answered out of turn: more than one line for one request"
	}
	if why == "" {
		p.answered = w.nonce
	}
	d.mu.Unlock()
	if why != "" {
		// Retired before the decision is answered: the next decision,
		// which its caller may send at once, must not reach this child.
		d.retire(p, why, true)
		w.ch <- result{why: why}
		return false
	}
	w.ch <- result{v: v}
	return true
}

// echoProblem says why a line that echoes got is not the answer of the
// request that carried want, or "" when it is; last is the nonce of the
// request the child answered before.
func echoProblem(got []byte, want, last string) string {
	switch {
	case string(got) == want:
		return ""
	case len(got) == 0:
		return "verdict does not echo the request's nonce"
	case string(got) == last:
		return "verdict echoes the nonce of an earlier request (a stale line)"
	}
	return "verdict echoes a nonce that is not its request's"
}
