package client

import (
	"bufio"
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), audit.MaxLine+1)
	started := false
	c.stderr.chain = trail.NewChecker()
	for sc.Scan() {
		line := sc.Bytes()
		if started && c.o.OnEvent == nil {
			continue // nobody reads the stream: it is drained, not decoded
		}
		var e audit.Event
		err := json.Unmarshal(line, &e)
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
				started = true
				ready <- nil
			case e.Event == "stop":
				ready <- fmt.Errorf("client: arca serve did not start: %s", e.Message)
				started = true
			default:
				ready <- fmt.Errorf("client: arca serve wrote %q before its start event", line)
				started = true
			}
		}
		if c.o.OnEvent != nil {
			c.o.OnEvent(e, err)
		}
	}
	if !started {
		ready <- errors.New("client: arca serve ended before its start event (its stderr closed)")
	}
}
