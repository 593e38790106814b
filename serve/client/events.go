package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
)

// stderrState is what the event reader keeps: the stream's checks.
type stderrState struct {
	chain   *trail.Checker
	lastSeq uint64
}

// readEvents reads the audit wire: it reports readiness (the start event,
// or the stop event of a serve that could not start) and hands every
// event to OnEvent, checked.
func (c *Client) readEvents(r io.Reader, ready chan<- error) {
	lr := newLineReader(r, audit.MaxLine)
	started := false
	c.stderr.chain = trail.NewChecker()
	for {
		if started && c.o.OnEvent == nil {
			// Nobody reads the stream: it is drained, not split or
			// decoded, as any reader that discards it would.
			drain(lr.r)
			return
		}
		line, err := lr.next()
		if errors.Is(err, errLong) {
			err = fmt.Errorf("an event line longer than %d bytes", audit.MaxLine)
			if !started {
				ready <- fmt.Errorf("client: arca serve wrote %v before its start event", err)
				started = true
			}
			if c.o.OnEvent != nil {
				c.o.OnEvent(audit.Event{}, err) // the chain breaks at the next event too
			}
			continue
		}
		if err != nil {
			break
		}
		line = line[:len(line)-1]
		var e audit.Event
		err = json.Unmarshal(line, &e)
		if err == nil {
			err = c.stderr.chain.Step(line)
		}
		if err == nil && e.Seq != c.stderr.lastSeq+1 {
			err = fmt.Errorf("seq %d follows seq %d", e.Seq, c.stderr.lastSeq)
		}
		c.stderr.lastSeq = e.Seq
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
