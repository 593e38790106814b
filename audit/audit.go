// Package audit writes arca's audit events: one JSON object per line, one
// event per answered request plus lifecycle events. serve writes them to
// stderr, the CLI appends them to the audit file.
//
// An Event has no field that can hold a secret value, an attestation, an
// identity or a key: an attestation is recorded by its SHA-256 only. The
// package uses the standard library only and never sees a secret.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// TimeFormat is RFC 3339 in UTC with nanoseconds, fixed width.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Sources of events.
const (
	SourceServe = "serve"
	SourceCLI   = "cli"
	SourceMCP   = "mcp" // arca mcp: in the CLI's audit file, or on its stderr with --audit-stderr
	SourceUI    = "ui"  // arca ui: the page's own reads of the vaults, in the CLI's audit file
)

// Outcomes of a request.
const (
	OK         = "ok"
	Denied     = "denied"
	NotFound   = "not_found"
	Error      = "error"
	BadRequest = "bad_request"
)

// Policy is a PDP verdict as recorded.
type Policy struct {
	Allow       bool     `json:"allow"`
	Reason      string   `json:"reason,omitempty"`
	Obligations []string `json:"obligations,omitempty"`
	Degraded    bool     `json:"degraded,omitempty"`
}

// Event is one audit line. Writer fills V, TS, Seq and Source, and User
// and Host when it was given a Who. Its keys are written in the order of
// its fields (appendEvent): source and prev always last.
type Event struct {
	V       int             `json:"v"`
	TS      string          `json:"ts"`
	Seq     uint64          `json:"seq"`
	Event   string          `json:"event"`
	Op      string          `json:"op,omitempty"`
	Outcome string          `json:"outcome,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Actor   string          `json:"actor,omitempty"`
	// Client is the name an MCP client gave for itself (arca mcp), beside
	// the actor; it is a claim, recorded as one.
	Client            string  `json:"client,omitempty"`
	AttestationSHA256 string  `json:"attestation_sha256,omitempty"`
	Env               string  `json:"env,omitempty"`
	Ref               string  `json:"ref,omitempty"`
	Version           uint64  `json:"version,omitempty"`
	Code              string  `json:"code,omitempty"`
	Message           string  `json:"message,omitempty"`
	Policy            *Policy `json:"policy,omitempty"`
	// Grant is the id of the grant the op ran under (SPEC §14), or the
	// grant a grant.open or grant.close event is about.
	Grant string `json:"grant,omitempty"`
	// Approval is the approval a request was retried with, or the one an
	// approval.request, approval.decide or approval.expire event is about.
	Approval *Approval `json:"approval,omitempty"`
	// Use is what the event of a use (http, exec, a request through the
	// proxy) adds; nil for every other event.
	*Use
	// User and Host are the process that wrote the event: the OS account
	// it runs as and the machine's name (see Who). The CLI's events carry
	// them, and serve's start event; serve's requests name their actor.
	// With Source they say who wrote the line, where, and how.
	User   string `json:"user,omitempty"`
	Host   string `json:"host,omitempty"`
	Source string `json:"source"`
	// Prev links the event to the one before it in its stream: the hex
	// SHA-256 of that event's line (see Link). The first event of a
	// stream has none.
	Prev string `json:"prev,omitempty"`
}

// Use is what an event of a use records: where it went (the service or
// action, the method and the path, never the query) and how it ended
// (status or exit code, or the cause of an upstream_failed), in counts
// only. It never holds a header value, a query, a body or an output.
type Use struct {
	Service    string `json:"service,omitempty"`
	Action     string `json:"action,omitempty"`
	Method     string `json:"method,omitempty"`
	Path       string `json:"path,omitempty"`
	Via        string `json:"via,omitempty"` // "op" or "proxy"
	Status     int    `json:"status,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Cause      string `json:"cause,omitempty"`
	BytesIn    int64  `json:"bytes_in"`
	BytesOut   int64  `json:"bytes_out"`
	ElapsedMS  int64  `json:"elapsed_ms"`
	Redactions int    `json:"redactions"`
}

// Approval is what an event records of an approval (SPEC §14): its id,
// and as the event has them the fingerprint of the request it is for and
// a decision with who made it, how (the approve op or the page) and the
// scope granted. Never a value.
type Approval struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Decision    string `json:"decision,omitempty"` // grant or deny
	Approver    string `json:"approver,omitempty"`
	Via         string `json:"via,omitempty"` // op or page
	Uses        int    `json:"uses,omitempty"`
	TTLS        int    `json:"ttl_s,omitempty"`
}

// HashAttestation returns the hex SHA-256 recorded in place of an attestation.
func HashAttestation(a string) string {
	sum := sha256.Sum256([]byte(a))
	return hex.EncodeToString(sum[:])
}

// Writer numbers events, links each to the one before it, and writes them
// one line each. It is safe for concurrent use; seq has no gaps as long as
// writes succeed. Written to a Chained sink (the CLI's audit file), the
// seq and the link continue from the sink's last event, whoever wrote it;
// to any other (serve's stderr) they are this writer's own, from 1.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	chained Chained // w, when it is one
	now     func() time.Time
	source  string
	seq     uint64
	prev    [2 * sha256.Size]byte // the link of the last event written, in hex
	hasPrev bool
	buf     []byte
	stamps  stamper
	pending Event // the event a chained sink is writing
	who     Who   // stamped on every event, when set
}

// NewWriter returns a Writer that writes events from source to w, stamped
// with now (time.Now when nil).
func NewWriter(w io.Writer, source string, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	c, _ := w.(Chained)
	return &Writer{w: w, chained: c, now: now, source: source}
}

// SetWho has the writer stamp w (made recordable by CleanWho) on every
// event it writes from now on,
// over whatever the event holds: the CLI sets its process's Who once, so
// no event of it goes without. Call it before the writer is shared.
func (a *Writer) SetWho(w Who) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.who = CleanWho(w)
}

// Write stamps e and writes it as one line. An error means the event was not
// written: the caller must not reveal or commit what the event describes.
func (a *Writer) Write(e Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	e.V = 1
	e.TS = ""
	e.Source = a.source
	if a.who != (Who{}) {
		e.User, e.Host = a.who.User, a.who.Host
	}
	if a.chained != nil {
		return a.writeChained(e)
	}
	e.Seq = a.seq + 1
	var prev []byte
	if a.hasPrev {
		prev = a.prev[:]
	}
	a.buf = append(appendEvent(a.buf[:0], &e, &a.stamps, a.now(), prev), '\n')
	if _, err := a.w.Write(a.buf); err != nil {
		return fmt.Errorf("audit: write event: %w", err)
	}
	a.seq = e.Seq
	sum := sha256.Sum256(a.buf[:len(a.buf)-1])
	hex.Encode(a.prev[:], sum[:])
	a.hasPrev = true
	return nil
}

// writeChained writes e to a Chained sink, which knows the seq and the
// link it continues from. The event waits in the writer (no allocation)
// while the sink has EncodeLine make its line.
func (a *Writer) writeChained(e Event) error {
	a.pending = e
	err := a.chained.Append(a)
	if err != nil {
		return fmt.Errorf("audit: write event: %w", err)
	}
	a.seq = a.pending.Seq
	return nil
}

// EncodeLine implements LineEncoder for writeChained: the pending event as
// the line after seq lastSeq, linked to prev. The caller holds a.mu.
func (a *Writer) EncodeLine(lastSeq uint64, prev []byte) []byte {
	a.pending.Seq = lastSeq + 1
	a.buf = append(appendEvent(a.buf[:0], &a.pending, &a.stamps, a.now(), prev), '\n')
	return a.buf
}

// Seq returns the seq of the last event written (0 before the first).
func (a *Writer) Seq() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seq
}

// Flusher is a sink that buffers events and can push them out.
type Flusher interface {
	Flush() error
}

// WriteFlush writes e and, when the sink buffers, flushes it: use it for an
// event that must be out before what it describes happens (a commit).
func (a *Writer) WriteFlush(e Event) error {
	if err := a.Write(e); err != nil {
		return err
	}
	if f, ok := a.w.(Flusher); ok {
		a.mu.Lock()
		defer a.mu.Unlock()
		if err := f.Flush(); err != nil {
			return fmt.Errorf("audit: write event: %w", err)
		}
	}
	return nil
}

// File is an append-only audit file. Flush fsyncs it, so an event written
// with WriteFlush is on disk before the change it describes is committed.
// It is Chained: every process appending to it continues one chain.
type File struct {
	f       *os.File
	known   bool                  // lastSeq and prev describe the file up to end
	end     int64                 // the file's size after this process's last append
	lastSeq uint64                // the seq of the last event in the file
	prev    [2 * sha256.Size]byte // its link, in hex
	hasPrev bool
}

// OpenFile opens the audit file at path for appending, creating it (mode
// 0600) and its directory (0700) if needed. Each event is one write, so
// processes appending at once never interleave their lines.
//
// The audit file is a durable trail, so it must be a regular file (or a
// link to one): a FIFO, a socket, a terminal, /dev/null, or /dev/stderr
// when stderr is not a file is refused, as none of them can be synced and
// the first two can block or take half a line. To ship events elsewhere,
// follow the file. A FIFO is never waited on: it is opened without
// blocking, and refused.
func OpenFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit file directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil, notRegular(path, fi.Mode())
		}
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
		return nil, notRegular(path, fi.Mode())
	}
	return &File{f: f}, nil
}

// notRegular is the error for an audit file of mode m that is not a
// regular file.
func notRegular(path string, m os.FileMode) error {
	what := "not a regular file"
	switch {
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	}
	return fmt.Errorf("audit file %s is %s: the audit trail must be a regular file (to ship events elsewhere, follow the file)", path, what)
}

// Write appends p as it is, outside the chain; events go through Append.
func (a *File) Write(p []byte) (int, error) { return a.f.Write(p) }

// Flush makes what was written durable.
func (a *File) Flush() error { return a.f.Sync() }

// Close closes the file.
func (a *File) Close() error { return a.f.Close() }
