package trail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/glob"
)

// Filter picks events. A zero field picks every event; Ref, Actor, User
// and Host are globs in the guardrails' language (package glob), the
// others are matched whole. An event without a user or a host (a serve
// request's) is not picked by a User or Host filter.
type Filter struct {
	Since, Until time.Time // Since inclusive, Until exclusive
	Env          string
	// EnvlessToo: with Env, the events that name no env are picked too
	// (a session's start and stop, which are every env's): the page's
	// view of one env.
	EnvlessToo bool
	Ref        string
	Op         string // an event's op, or its event when it has none (a start)
	Outcome    string
	Actor      string
	User       string // the OS account of the process that wrote the event
	Host       string // the machine it ran on
}

// Check refuses a filter whose globs are malformed.
func (f Filter) Check() error {
	for name, g := range map[string]string{"--ref": f.Ref, "--actor": f.Actor, "--user": f.User, "--host": f.Host} {
		if g == "" {
			continue
		}
		if p := glob.Problem(g); p != "" {
			return fmt.Errorf("%s %q: %s", name, g, p)
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return errors.New("--until must be after --since")
	}
	return nil
}

// Match reports whether f picks e, stamped at ts.
func (f Filter) Match(e audit.Event, ts time.Time) bool {
	op := e.Op
	if op == "" {
		op = e.Event
	}
	switch {
	case !f.Since.IsZero() && ts.Before(f.Since), !f.Until.IsZero() && !ts.Before(f.Until):
		return false
	case f.Env != "" && e.Env != f.Env && !(f.EnvlessToo && e.Env == ""), f.Op != "" && op != f.Op, f.Outcome != "" && e.Outcome != f.Outcome:
		return false
	case f.Ref != "" && !glob.Match(f.Ref, e.Ref), f.Actor != "" && !glob.Match(f.Actor, e.Actor):
		return false
	case f.User != "" && (e.User == "" || !glob.Match(f.User, e.User)), f.Host != "" && (e.Host == "" || !glob.Match(f.Host, e.Host)):
		return false
	}
	return true
}

// Entry is one event read from a trail, with its line.
type Entry struct {
	Line  []byte // the exact line, valid only during the call it is passed to
	Event audit.Event
	TS    time.Time
}

// Scan reads events from r and calls fn with each that f picks. A line
// that is not an event stops it with an error naming the line; so does an
// error of fn.
func Scan(r io.Reader, f Filter, fn func(Entry) error) error {
	lr := newLineReader(r)
	for n := 1; ; n++ {
		line, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %v", n, err)
		}
		if err := pick(line, n, f, fn); err != nil {
			return err
		}
	}
}

// pick decodes line n and hands it to fn if f picks it.
func pick(line []byte, n int, f Filter, fn func(Entry) error) error {
	var e audit.Event
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("line %d: not an audit event", n)
	}
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return fmt.Errorf("line %d: not an audit event (its ts is %q)", n, e.TS)
	}
	if !f.Match(e, ts) {
		return nil
	}
	return fn(Entry{Line: line, Event: e, TS: ts})
}

// Follow is Scan of the file at path that, at its end, waits for more:
// it reads what is appended every poll until ctx ends, which is how it
// returns (nil). A file that shrinks (truncated) is read again from its
// start; a file rotated away and replaced is followed into its successor,
// from its start. A line is handed over only once its newline is there.
func Follow(ctx context.Context, path string, f Filter, poll time.Duration, fn func(Entry) error) error {
	return follow(ctx, path, f, func() <-chan time.Time { return time.After(poll) }, fn)
}

// follow is Follow that, at the end of the file, waits for what next
// returns to deliver before it reads again: the tests hand it a channel of
// their own to say when each read happens.
func follow(ctx context.Context, path string, f Filter, next func() <-chan time.Time, fn func(Entry) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { fh.Close() }()
	var (
		off     int64
		pending []byte // a line whose newline has not come yet
		n       = 1
		buf     = make([]byte, 64<<10)
	)
	for {
		held, _ := fh.Stat()
		if now, err := os.Stat(path); err == nil && held != nil && !os.SameFile(now, held) {
			// Rotated: what is left of the old file was read at the last
			// poll; the new one is read from its start.
			if next, err := os.Open(path); err == nil {
				fh.Close()
				fh, held = next, now
				off, pending, n = 0, pending[:0], 1
			}
		}
		if held != nil && held.Size() < off {
			off, pending, n = 0, pending[:0], 1
		}
		k, err := fh.ReadAt(buf, off)
		off += int64(k)
		pending = append(pending, buf[:k]...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			if err := pick(pending[:i], n, f, fn); err != nil {
				return err
			}
			n++
			pending = pending[i+1:]
		}
		if len(pending) > audit.MaxLine {
			return fmt.Errorf("line %d: longer than %d bytes: not an audit event", n, audit.MaxLine)
		}
		pending = append([]byte(nil), pending...)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if k < len(buf) {
			select {
			case <-ctx.Done():
				return nil
			case <-next():
			}
		}
	}
}

// ParseWhen reads a time as arca audit's --since and --until take one:
// RFC 3339, or a duration back from now (90m, 24h).
func ParseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: give a time (RFC 3339: 2026-12-01T09:00:00Z) or a duration back from now (90m, 24h)", s)
}
