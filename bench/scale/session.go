package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Bounds on a session's end.
const (
	drainGrace = 5 * time.Second // past the end and the vault's deadline, before SIGTERM
	termGrace  = 5 * time.Second // after SIGTERM, before SIGKILL
)

// session is one arca serve child process with pipes on both ends. Its
// stderr, the audit wire, is read and dropped, as an embedder would.
type session struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	stop sync.Once
}

// serve starts arca serve in h.
func (h home) serve() (*session, error) {
	cmd := h.cmd("serve")
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &session{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// answer is the part of a response a measurement checks.
type answer struct {
	ID     json.RawMessage `json:"id"`
	OK     bool            `json:"ok"`
	Error  *struct{ Code, Message string }
	Result struct {
		Value *string `json:"value"`
	} `json:"result"`
}

// check reads the next answer, which must be to request id: it returns
// what was wrong with an answer that came ("" for a good one: ok, and for
// a get the value put) and detail for the report; err when none came or
// it is not an answer to id, after which the session's answers cannot be
// matched to its requests.
func (s *session) check(id uint64, get bool) (problem, detail string, err error) {
	line, err := s.out.ReadSlice('\n')
	if err != nil {
		return "", "", fmt.Errorf("no answer to request %d: %w", id, err)
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		return "", "", fmt.Errorf("answer to request %d is not JSON: %w", id, err)
	}
	if want := strconv.FormatUint(id, 10); string(a.ID) != want {
		return "", "", fmt.Errorf("answer to request %s where %s was due", a.ID, want)
	}
	switch {
	case !a.OK && a.Error != nil:
		return a.Error.Code, a.Error.Message, nil
	case !a.OK:
		return "not ok", "an answer with \"ok\":false and no error", nil
	case get && (a.Result.Value == nil || *a.Result.Value != value):
		return "wrong value", "a get answered with another value than the one put", nil
	}
	return "", "", nil
}

// roundTrip sends line, request id (a get when get is set), and checks
// its answer.
func (s *session) roundTrip(line string, id uint64, get bool) error {
	if _, err := io.WriteString(s.in, line); err != nil {
		return err
	}
	problem, detail, err := s.check(id, get)
	if err == nil && problem != "" {
		err = fmt.Errorf("request %d: %s: %s", id, problem, detail)
	}
	return err
}

// pending is a request sent, awaiting its answer.
type pending struct {
	id   uint64
	sent time.Time
}

// drive sends requests of m's load, as lane, with up to m.depth in flight,
// until end; then it closes stdin and reads the answers still due, until
// the vault's deadline and drainGrace have passed since end. A session
// that has not ended by then is stopped (SIGTERM, then SIGKILL). It
// returns what the requests came to.
func (s *session) drive(m measurement, lane int, end time.Time, deadline time.Duration) tally {
	slots := make(chan struct{}, m.depth)
	queue := make(chan pending, m.depth)
	go s.send(m.load, lane, end, slots, queue)
	watchdog := time.AfterFunc(time.Until(end)+deadline+drainGrace, s.interrupt)
	defer watchdog.Stop()
	var t tally
	for p := range queue {
		t.sent++
		problem, detail, err := s.check(p.id, m.load == getSeeded)
		if err != nil {
			s.interrupt()
			t.lost(1+drain(queue, &t), err.Error())
			break
		}
		now := time.Now()
		t.answered(now.Sub(p.sent), now, end, deadline, problem, detail)
		<-slots
	}
	if err := s.wait(); err != nil {
		t.fail(err.Error())
	}
	t.serveCPU = s.cmd.ProcessState.UserTime() + s.cmd.ProcessState.SystemTime()
	return t
}

// drain counts the requests still in queue once the sender closes it,
// adding them to t's sent.
func drain(queue <-chan pending, t *tally) int {
	n := 0
	for range queue {
		n++
		t.sent++
	}
	return n
}

// send writes requests while a slot is free, until end; then it closes
// stdin, and queue. Each request goes on queue before its line is written.
func (s *session) send(l load, lane int, end time.Time, slots chan<- struct{}, queue chan<- pending) {
	defer close(queue)
	defer s.in.Close()
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	var line []byte
	for id := uint64(1); ; id++ {
		select {
		case slots <- struct{}{}:
		case <-timer.C:
			return
		}
		now := time.Now()
		if !now.Before(end) {
			return
		}
		line = request(line[:0], l, lane, id)
		queue <- pending{id: id, sent: now}
		if _, err := s.in.Write(line); err != nil {
			return // the reader finds the session gone
		}
	}
}

// request appends request id of load l, sent by lane, as a line.
func request(b []byte, l load, lane int, id uint64) []byte {
	b = strconv.AppendUint(append(b, `{"id":`...), id, 10)
	switch l {
	case putOwn:
		b = fmt.Appendf(b, `,"op":"put","ref":"arca://%s/s%d-%d","value":%q}`, ns, lane, id%ownNames, value)
	case putShared:
		b = fmt.Appendf(b, `,"op":"put","ref":"arca://%s/shared","value":%q}`, ns, value)
	case getSeeded:
		b = fmt.Appendf(b, `,"op":"get","ref":"arca://%s/g%d"}`, ns, (uint64(lane)+id)%seeded)
	}
	return append(b, '\n')
}

// interrupt stops the session: SIGTERM (serve answers the request in hand
// and ends), then SIGKILL if it has not ended after termGrace.
func (s *session) interrupt() {
	s.stop.Do(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		time.AfterFunc(termGrace, func() { s.cmd.Process.Kill() })
	})
}

// wait waits for the session to end; an exit that is not 0 is an error.
func (s *session) wait() error {
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("arca serve: %w", err)
	}
	return nil
}

// close ends a session used in lockstep: stdin closed, the process waited
// for (stopped if it has not ended within drainGrace).
func (s *session) close() error {
	s.in.Close()
	t := time.AfterFunc(drainGrace, s.interrupt)
	defer t.Stop()
	return s.wait()
}
