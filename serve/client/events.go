package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/arca-secrets/arca/audit"
)

// stderrState is what the event reader keeps to check the stream: the
// line before (its link), the seq before, and whether the chain is
// required.
type stderrState struct {
	link    [2 * sha256.Size]byte // the hex SHA-256 of the line before
	hasLink bool                  // false at the start, and after a line too long to hash
	chained bool                  // a prev was seen in this stream: from now on it is required
	lastSeq uint64
	seqOK   bool // lastSeq is known: false after a line with no seq
}

// check checks one event line (without its newline), decoded as e (or
// not, decodeErr), against the line before it, and then takes it as the
// line before the next. Each line is checked against the line as it came,
// broken or not, so one bad line is one error, not one for every event
// after it. prev is compared as the JSON field it is, wherever it stands
// in the line; promised says the manifest listed audit_chain.
func (s *stderrState) check(line []byte, e *audit.Event, decodeErr error, promised bool) error {
	var err error
	switch {
	case decodeErr != nil:
		err = fmt.Errorf("an event line that is not an audit event (%d bytes): %v", len(line), decodeErr)
	case e.Prev != "":
		s.chained = true
		if s.hasLink && e.Prev != string(s.link[:]) {
			err = fmt.Errorf("seq %d does not link to the event before it: a line was changed, dropped or added", e.Seq)
		}
	case s.hasLink && (s.chained || promised):
		// A server from before the chain writes no prev: it is required
		// once the stream or the manifest says the server chains.
		err = fmt.Errorf("seq %d carries no prev: the chain is cut", e.Seq)
	}
	if err == nil && s.seqOK && e.Seq != s.lastSeq+1 {
		err = fmt.Errorf("seq %d follows seq %d", e.Seq, s.lastSeq)
	}
	sum := sha256.Sum256(line)
	hex.Encode(s.link[:], sum[:])
	s.hasLink = true
	s.lastSeq, s.seqOK = e.Seq, decodeErr == nil
	return err
}

// skipped takes a line too long to read as the line before the next: its
// link and seq are unknown, so the next event is not checked against it
// (the long line was reported itself).
func (s *stderrState) skipped() { s.hasLink, s.seqOK = false, false }

// readEvents reads the audit wire: it reports readiness (the start event,
// or the stop event of a serve that could not start) and hands every
// event to OnEvent, checked.
func (c *Client) readEvents(r io.Reader, ready chan<- error) {
	lr := newLineReader(r, audit.MaxLine)
	started := false
	c.stderr.seqOK = true // the first event is seq 1
	for {
		if started && c.o.OnEvent == nil {
			// Nobody reads the stream: it is drained, not split or
			// decoded, as any reader that discards it would.
			drain(lr.rest())
			return
		}
		line, err := lr.next()
		if errors.Is(err, errLong) {
			err = fmt.Errorf("an event line longer than %d bytes", audit.MaxLine)
			if !started {
				ready <- fmt.Errorf("client: arca serve wrote %v before its start event", err)
				started = true
			}
			c.stderr.skipped()
			if c.o.OnEvent != nil {
				c.o.OnEvent(audit.Event{}, err)
			}
			continue
		}
		if err != nil {
			break
		}
		var e audit.Event
		err = c.stderr.check(line, &e, json.Unmarshal(line, &e), c.chainPromised.Load())
		if !started {
			switch {
			case e.Event == "start":
				ready <- nil
			case e.Event == "stop":
				ready <- fmt.Errorf("client: arca serve did not start: %s", e.Message)
			default:
				ready <- fmt.Errorf("client: arca serve wrote %q before its start event", line[:min(len(line), 256)])
			}
			started = true
		}
		if c.o.OnEvent != nil {
			c.o.OnEvent(e, err)
		}
	}
	if !started {
		ready <- errNoStart // Start adds the exit status
	}
}

// errNoStart is readEvents' word that stderr ended before any line.
var errNoStart = errors.New("client: arca serve ended before its start event (its stderr closed)")

// drain reads r to its end and keeps nothing: serve's stderr when no one
// wants its events (the benchmark's raw side drains the same way). Reads
// as large as a pipe holds cost a sixth of io.Discard's 8 KiB ones.
func drain(r io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := r.Read(buf); err != nil {
			return
		}
	}
}
