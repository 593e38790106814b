package trail

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// The bounds of a batch: the index reads lines a batch at a time, parses
// a batch's lines in parallel (their SHA-256s, their facts, their chain
// layout), then adds them to the index in order.
const (
	batchLines = 16 << 10
	batchBytes = 4 << 20
)

// parsed is a line of a batch, read by a worker.
type parsed struct {
	line  []byte // in the batch's buffer, its newline after it
	link  [sha256.Size]byte
	facts facts
	err   error // readFacts'
	chain lineFacts
	ok    bool // parseLine's
}

// batch is lines read, back to back in buf, each with its newline.
type batch struct {
	buf   []byte
	lines []parsed
}

// read fills b with the next lines of lr, up to batchLines or batchBytes:
// the error that ended it (io.EOF, a line cut or too long) when it did,
// nil when the batch is full. Lines before the error are in b.
func (b *batch) read(lr *lineReader) error {
	b.buf, b.lines = b.buf[:0], b.lines[:0]
	for len(b.lines) < batchLines && len(b.buf) < batchBytes {
		line, err := lr.next()
		if err != nil {
			return err
		}
		start := len(b.buf)
		b.buf = append(append(b.buf, line...), '\n')
		b.lines = append(b.lines, parsed{line: b.buf[start : len(b.buf)-1 : len(b.buf)-1]})
	}
	return nil
}

// parse reads every line of b, the lines shared among GOMAXPROCS
// workers. The lines are copies in b's buffer: a line slice of an
// earlier, smaller buffer stays as it was when append grows it.
func (b *batch) parse() {
	workers := max(1, runtime.GOMAXPROCS(0))
	per := max(1, (len(b.lines)+workers-1)/workers)
	var wg sync.WaitGroup
	for from := 0; from < len(b.lines); from += per {
		part := b.lines[from:min(from+per, len(b.lines))]
		wg.Go(func() {
			for i := range part {
				p := &part[i]
				p.link = sha256.Sum256(p.line)
				p.facts, p.err = readFacts(p.line)
				p.chain, p.ok = parseLine(p.line)
			}
		})
	}
	wg.Wait()
}

// add indexes one parsed line and checks it against the chain. The line
// is read in arca's layout (readFacts), not decoded whole, and its
// SHA-256 is taken once, for the chain and the index both.
func (x *Index) add(p *parsed) error {
	var bad errBadTS
	switch {
	case errors.As(p.err, &bad):
		return fmt.Errorf("line %d: %v", len(x.events)+1, p.err)
	case p.err != nil:
		return fmt.Errorf("line %d: not an audit event", len(x.events)+1)
	}
	if x.broken == nil {
		var b *Break
		if err := x.chain.stepParsed(p.line, p.link, p.chain, p.ok); errors.As(err, &b) {
			x.broken = b
		}
	}
	f := &p.facts
	op := f.op
	if len(op) == 0 {
		op = f.event
	}
	x.events = append(x.events, indexed{off: x.off, ts: f.ts, env: x.idOf(slotEnv, f.env), ref: x.id(f.ref), op: x.idOf(slotOp, op),
		actor: x.idOf(slotActor, f.actor), outcome: x.idOf(slotOutcome, f.outcome), user: x.idOf(slotUser, f.user), host: x.idOf(slotHost, f.host),
		sum: binary.BigEndian.Uint64(p.link[:8])})
	x.off += int64(len(p.line)) + 1
	return nil
}

// addBatch adds b's lines in order, up to the first that is not an event
// (its error returned), and hashes the bytes of those it added.
func (x *Index) addBatch(b *batch) error {
	from := x.off
	var err error
	for i := range b.lines {
		if err = x.add(&b.lines[i]); err != nil {
			break
		}
	}
	x.hashRead(b.buf[:x.off-from])
	return err
}

// The fields whose last string the index remembers: most lines repeat the
// env, op, actor, outcome, user and host of the line before.
const (
	slotEnv = iota
	slotOp
	slotActor
	slotOutcome
	slotUser
	slotHost
	slots
)

// lastID is a field's last string and its number.
type lastID struct {
	s  string
	id uint32
}

// idOf is id of b, a string of the field slot, looked up in the map only
// when it is not that field's last.
func (x *Index) idOf(slot int, b []byte) uint32 {
	if l := &x.last[slot]; l.s == string(b) {
		return l.id
	}
	n := x.id(b)
	x.last[slot] = lastID{x.strs[n], n}
	return n
}
