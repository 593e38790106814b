package serve

import (
	"fmt"
	"io"
	"slices"
	"sync"
)

// flushAt is how much pending output forces a flush even while input is
// still buffered, so a long pipelined burst stays bounded in memory.
const flushAt = 256 << 10

// wire holds serve's two outputs. Events (stderr) and responses (stdout) are
// buffered and written only by flush, events first: a response never reaches
// stdout before its request's event reached stderr.
//
// Where every byte goes: stdout gets one response line per request line;
// stderr gets audit event lines and nothing else.
//
// A wire is safe for concurrent use: the session writes through it, and
// so does its proxy, whose events are written and flushed from the
// proxy's own goroutines (mu).
type wire struct {
	mu             sync.Mutex
	stdout, stderr io.Writer

	ev  []byte // pending event lines
	out []byte // pending response lines
	// out[:safe] are responses whose events are already on stderr; where the
	// ids of the rest sit in out is kept, so they can be answered op_error if
	// stderr breaks.
	safe    int
	unsafed []span
	broken  bool // stderr failed: serve must stop
}

// Write buffers an audit event line (wire is the audit.Writer's sink).
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, errBroken
	}
	w.ev = append(w.ev, p...)
	return len(p), nil
}

// Flush pushes pending events to stderr (audit.Flusher): the changes and
// responses they describe may then go ahead.
func (w *wire) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushEvents()
}

// flushEvents is Flush with mu held.
func (w *wire) flushEvents() error {
	if w.broken {
		return errBroken
	}
	if len(w.ev) > 0 {
		if _, err := w.stderr.Write(w.ev); err != nil {
			w.broken = true
			return err
		}
		w.ev = w.ev[:0]
	}
	w.safe, w.unsafed = len(w.out), w.unsafed[:0]
	return nil
}

// wireFailed is the answer of a request whose event could not be
// confirmed on stderr.
const wireFailed = "the audit wire (stderr) failed; serve stops"

// span is where a response's id sits in out.
type span struct{ start, end int }

// respond queues one response line, which starts `{"id":<id>`.
func (w *wire) respond(id, line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := len(w.out) + len(`{"id":`)
	w.unsafed = append(w.unsafed, span{at, at + len(idOrNull(id))})
	w.out = append(w.out, line...)
	w.out = append(w.out, '\n')
}

// ready reports whether any output is pending.
func (w *wire) ready() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.out) > 0 || len(w.ev) > 0
}

// pending reports whether enough output is pending to flush now.
func (w *wire) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.out)+len(w.ev) >= flushAt
}

// flush writes pending events, then pending responses. If stderr fails, the
// responses whose events may not have landed are replaced by op_error and
// errBroken is returned: serve stops rather than run unaudited.
func (w *wire) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushEvents(); err != nil {
		out := slices.Clone(w.out[:w.safe])
		for _, sp := range w.unsafed {
			out = append(appendError(out, w.out[sp.start:sp.end], "op_error", wireFailed), '\n')
		}
		w.out, w.unsafed = out, nil
		if _, werr := w.stdout.Write(w.out); werr != nil {
			return fmt.Errorf("stdout: %w", werr)
		}
		return errBroken
	}
	if len(w.out) > 0 {
		if _, err := w.stdout.Write(w.out); err != nil {
			return fmt.Errorf("stdout: %w", err)
		}
	}
	w.out, w.safe = w.out[:0], 0
	if cap(w.out) > 4*flushAt {
		w.out = nil // let a burst of huge responses go
	}
	return nil
}

// isBroken reports whether stderr failed: serve must stop.
func (w *wire) isBroken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// setBroken marks the wire broken: an event could not be written.
func (w *wire) setBroken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broken = true
}
