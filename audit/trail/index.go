package trail

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arca-secrets/arca/audit"
)

// Index holds what queries need of a trail file's events, compactly, and
// where each line is: a page that shows the trail again and again reads
// only what was appended since it last looked. Update reads it, checking
// the chain as Verify does; Query filters in memory and reads back only
// the lines it returns. An event costs some 56 bytes; its strings (env,
// ref, op, actor, user, host, outcome) are held once each.
//
// The index vouches only for the file as it is: before it reads what was
// appended, Update hashes the bytes it read before and reads the file again
// from its start when they changed (an edit in place, of any length), so a
// chain that holds in the index holds in the file. Each line read back for
// a query is checked against the digest it had when it was indexed.
type Index struct {
	mu     sync.Mutex
	path   string
	off    int64 // the bytes read: whole lines
	events []indexed
	strs   []string
	ids    map[string]uint32
	last   [slots]lastID // each field's last string, and its number
	chain  checker
	broken *Break      // the first break, once found
	bad    error       // a line that is not an event stops the index there
	cut    error       // the file ends in the middle of a line (read again at the next Update)
	file   os.FileInfo // the file read, to tell a rotated one
	// The bytes read, [0, off), as SHA-256s: one of each whole chunk of
	// chunk bytes, checked in parallel, and one of the rest (part, its
	// partN bytes). Only growth keeps them; anything else makes the file
	// read again.
	chunk  int64
	chunks [][sha256.Size]byte
	part   hash.Hash
	partN  int64
	// The line that stopped the index, when one did: [off, badEnd) and
	// its SHA-256, so that mending it makes the file read again too.
	badEnd int64
	badSum [sha256.Size]byte
}

// chunkSize is the span of the file one SHA-256 of chunks covers.
const chunkSize = 4 << 20

// indexed is one event: where its line starts, its time, its strings by
// their number in strs, and the first 8 bytes of its line's SHA-256, to
// check the line when it is read back.
type indexed struct {
	off                          int64
	ts                           int64 // Unix nanoseconds
	env, ref, op, actor, outcome uint32
	user, host                   uint32
	sum                          uint64
}

// errChanged is a line read back that is not the line indexed.
var errChanged = errors.New("the trail changed under its index")

// NewIndex is an empty index of the trail file at path.
func NewIndex(path string) *Index {
	x := &Index{path: path, chunk: chunkSize}
	x.reset()
	return x
}

// reset empties x, to read its file from the start.
func (x *Index) reset() {
	x.off, x.events, x.chain, x.broken, x.bad, x.cut, x.file = 0, nil, checker{}, nil, nil, nil, nil
	x.strs, x.ids, x.last = []string{""}, map[string]uint32{"": 0}, [slots]lastID{}
	x.chunks, x.part, x.partN, x.badEnd = nil, sha256.New(), 0, 0
}

func (x *Index) id(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	if n, ok := x.ids[string(b)]; ok {
		return n
	}
	s := string(b)
	x.strs = append(x.strs, s)
	x.ids[s] = uint32(len(x.strs) - 1)
	return uint32(len(x.strs) - 1)
}

// Update reads what was appended to the file since the last Update: each
// whole line is checked against the chain and indexed. A file that is not
// there is empty. The file is read again from its start when it is not the
// file read before (rotated away and replaced), or when the bytes read
// before are not all there as they were: it shrank, or was edited anywhere,
// even in place and to the same length. Telling growth from an edit costs
// a SHA-256 of the bytes read before, each Update, in chunks hashed in
// parallel.
func (x *Index) Update() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.update()
}

func (x *Index) update() error {
	f, err := os.Open(x.path)
	if errors.Is(err, os.ErrNotExist) {
		x.reset()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if x.file != nil && (!os.SameFile(fi, x.file) || fi.Size() < max(x.off, x.badEnd) || !x.holds(f)) {
		x.reset()
	}
	x.file = fi
	x.cut = nil
	if x.bad != nil || fi.Size() == x.off {
		return nil
	}
	if _, err := f.Seek(x.off, io.SeekStart); err != nil {
		return err
	}
	lr := newLineReader(io.LimitReader(f, fi.Size()-x.off))
	// The buffer of a batch: what was appended, when that is less.
	b := &batch{buf: make([]byte, 0, min(batchBytes+audit.MaxLine+1, fi.Size()-x.off+1))}
	for {
		err := b.read(lr)
		b.parse()
		if aerr := x.addBatch(b); aerr != nil {
			x.bad = aerr
			x.seeBad(f, fi.Size())
			return nil
		}
		switch {
		case err == nil:
		case errors.Is(err, errCut): // a line not whole (yet): read again at the next Update
			x.cut = fmt.Errorf("line %d: %v", len(x.events)+1, err)
			return nil
		case err == io.EOF:
			return nil
		default:
			x.bad = fmt.Errorf("line %d: %v", len(x.events)+1, err)
			x.seeBad(f, fi.Size())
			return nil
		}
	}
}

// holds reports whether the bytes the index read are still in f as they
// were: every chunk (in parallel, as many at once as GOMAXPROCS), the part
// after them, and the line that stopped the index.
func (x *Index) holds(f *os.File) bool {
	var changed atomic.Bool
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(x.chunks)) {
		wg.Go(func() {
			buf := make([]byte, x.chunk)
			for k := range jobs {
				if _, err := f.ReadAt(buf, int64(k)*x.chunk); err != nil || sha256.Sum256(buf) != x.chunks[k] {
					changed.Store(true)
				}
			}
		})
	}
	for k := range x.chunks {
		if changed.Load() {
			break
		}
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	return !changed.Load() && sumAt(f, int64(len(x.chunks))*x.chunk, x.partN) == [sha256.Size]byte(x.part.Sum(nil)) &&
		(x.bad == nil || sumAt(f, x.off, x.badEnd-x.off) == x.badSum)
}

// sumAt is the SHA-256 of f's n bytes from off; a zero sum when they are
// not all there.
func sumAt(f *os.File, off, n int64) [sha256.Size]byte {
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil && n > 0 {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// seeBad keeps the SHA-256 of the line that stopped the index (up to
// audit.MaxLine and its newline), so that a change to it, too, makes the
// file read again.
func (x *Index) seeBad(f *os.File, size int64) {
	x.badEnd = x.off + min(size-x.off, audit.MaxLine+1)
	x.badSum = sumAt(f, x.off, x.badEnd-x.off)
}

// hashRead adds b, bytes the index read, to its SHA-256s.
func (x *Index) hashRead(b []byte) {
	for len(b) > 0 {
		n := min(int64(len(b)), x.chunk-x.partN)
		x.part.Write(b[:n])
		x.partN += n
		b = b[n:]
		if x.partN == x.chunk {
			x.chunks = append(x.chunks, [sha256.Size]byte(x.part.Sum(nil)))
			x.part.Reset()
			x.partN = 0
		}
	}
}

// Bar is one bar of a chart of events over time: those from Start on, by
// outcome (every outcome but ok and denied counts as an error).
type Bar struct {
	Start              time.Time
	OK, Denied, Errors int
}

// QueryResult is what Query found.
type QueryResult struct {
	Latest  []Entry   // the last of the events f picks, oldest first
	Denied  []Entry   // the last of those denied, oldest first
	Matched int       // how many events f picks
	First   time.Time // the time of the earliest of them
	Last    time.Time // the time of the latest
	Bars    []Bar     // those events in bars of equal time, first to last
	Chain   Result    // the chain as far as it held
	Broken  *Break    // where it broke, if it did
	Invalid error     // the first line that is not an event, where the index stopped
	Cut     error     // the file ends in the middle of a line, as arca audit verify finds it
}

// Query returns what f picks of the indexed events: how many, their chart
// in bars bars, and the last limit of them and of the denied ones, read
// back from the file. The chart's span is known after a first pass over
// the index; the second counts the bars over the events picked, 4 bytes
// each while it runs. A line read back that is not the line indexed (the
// file changed since Update) makes the file read again from its start, and
// the query run again on what it holds now.
func (x *Index) Query(f Filter, limit, bars int) (QueryResult, error) {
	return x.QueryOver(f, limit, bars, Span{})
}

// Span is the time a chart's bars divide, From to To; the zero Span is
// from the first event picked to the last. Several trails charted
// together share one.
type Span struct{ From, To time.Time }

// QueryOver is Query with the chart's bars dividing span.
func (x *Index) QueryOver(f Filter, limit, bars int, span Span) (QueryResult, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	res, err := x.query(f, limit, bars, span)
	if errors.Is(err, errChanged) {
		x.reset()
		if err := x.update(); err != nil {
			return QueryResult{}, err
		}
		res, err = x.query(f, limit, bars, span)
	}
	return res, err
}

func (x *Index) query(f Filter, limit, bars int, sp Span) (QueryResult, error) {
	res := QueryResult{Chain: x.chain.result(), Broken: x.broken, Invalid: x.bad, Cut: x.cut}
	var latest, denied []int
	deniedID, hasDenied := x.ids[audit.Denied]
	okID, hasOK := x.ids[audit.OK]
	var first, last int64
	var hits []int32 // the events f picks, for the second pass: 4 bytes each
	for i := range x.events {
		ev := &x.events[i]
		if !x.match(ev, f) {
			continue
		}
		hits = append(hits, int32(i))
		if res.Matched == 0 || ev.ts < first {
			first = ev.ts
		}
		last = max(last, ev.ts)
		res.Matched++
		latest = keepLastN(latest, i, limit)
		if hasDenied && ev.outcome == deniedID {
			denied = keepLastN(denied, i, limit)
		}
	}
	if res.Matched > 0 {
		res.First, res.Last = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
	}
	if !sp.From.IsZero() && sp.To.After(sp.From) {
		first, last = sp.From.UnixNano(), sp.To.UnixNano()
	}
	if res.Matched > 0 && bars > 0 {
		span := (last-first)/int64(bars) + 1
		res.Bars = make([]Bar, bars)
		for i := range res.Bars {
			res.Bars[i].Start = time.Unix(0, first+int64(i)*span).UTC()
		}
		for _, i := range hits {
			ev := &x.events[i]
			b := &res.Bars[max(0, min(int((ev.ts-first)/span), bars-1))]
			switch {
			case hasOK && ev.outcome == okID:
				b.OK++
			case hasDenied && ev.outcome == deniedID:
				b.Denied++
			default:
				b.Errors++
			}
		}
	}
	var err error
	if res.Latest, err = x.read(latest); err != nil {
		return res, err
	}
	res.Denied, err = x.read(denied)
	return res, err
}

// match is Filter.Match on an indexed event.
func (x *Index) match(ev *indexed, f Filter) bool {
	e := audit.Event{Env: x.strs[ev.env], Ref: x.strs[ev.ref], Op: x.strs[ev.op], Actor: x.strs[ev.actor], Outcome: x.strs[ev.outcome],
		User: x.strs[ev.user], Host: x.strs[ev.host]}
	return f.Match(e, time.Unix(0, ev.ts))
}

func keepLastN(xs []int, i, n int) []int {
	if n <= 0 {
		return xs
	}
	if len(xs) == n {
		copy(xs, xs[1:])
		xs = xs[:n-1]
	}
	return append(xs, i)
}

// read reads back and decodes the lines of the events at idx, each checked
// against the digest it had when it was indexed: errChanged when one is
// not that line, or is not there.
func (x *Index) read(idx []int) ([]Entry, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	f, err := os.Open(x.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errChanged, err)
	}
	defer f.Close()
	out := make([]Entry, 0, len(idx))
	for _, i := range idx {
		end := x.off
		if i+1 < len(x.events) {
			end = x.events[i+1].off
		}
		line := make([]byte, end-x.events[i].off-1)
		if _, err := f.ReadAt(line, x.events[i].off); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", errChanged, i+1, err)
		}
		if link := sha256.Sum256(line); binary.BigEndian.Uint64(link[:8]) != x.events[i].sum {
			return nil, fmt.Errorf("%w: line %d is not the line indexed", errChanged, i+1)
		}
		var e audit.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", errChanged, i+1, err)
		}
		out = append(out, Entry{Line: line, Event: e, TS: time.Unix(0, x.events[i].ts).UTC()})
	}
	return out, nil
}
