package file

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/vault/internal/seal"
)

// The file vault is one JSON document in a canonical layout, one record per
// line so that a change touches one line:
//
//	{"arca_vault":{"format":"arca-vault/2","vault_id":…,"recipients":[…],"data_key":…,"commits":[…],"mac":…},"records":{
//	"<slot>":"<the name's chain: line.go>",
//	…
//	}}
//
// Slots are lowercase hex and appear in strictly increasing order. arca reads
// only this layout: any other, even equivalent JSON, is a corrupt vault. That
// keeps parsing fast (no general JSON decode of the records) and makes
// duplicate or reordered slots impossible to smuggle in.
//
// Every write writes format arca-vault/2, whose lines may hold history
// (line.go); arca-vault/1 is read as well: a vault written before history,
// whose lines are all legacy. An arca that knows only /1 refuses a /2 file
// rather than misread it.
const (
	fileFormat  = "arca-vault/2"
	formatV1    = "arca-vault/1"
	linePrefix  = `{"arca_vault":`
	lineSuffix  = `,"records":{`
	fileTrailer = "}}\n"
	slotHexSize = 2 * seal.SlotSize
)

// header is the vault's first line (seal.Header: the wrapped data key, the
// MAC that binds format, vault id and recipients to it, and the marks of
// the latest commits, commits.go, which it does not bind).
type header = seal.Header

// contents is a vault file: its header, its record lines as read (raw),
// and, once indexed, its records in file order with an index by slot.
// A handle that only ever looks up one record (a one-shot get) never
// indexes: it binary-searches the sorted lines instead, and in a large
// file reads only the pages that search touches (pages.go).
type contents struct {
	hdr      header
	unread   *pages           // the record lines, not read yet (raw is "")
	raw      string           // the record lines, each ending in "\n"
	indexed  bool             // entries and byPrefix are built
	entries  []entry          // strictly increasing slots
	byPrefix map[uint64]entry // an entry for every slot prefix present
	gen      uint64           // the highest generation of a line (line.go), once indexed
	hash     string           // the mark of a file with no commits, once computed (linesMark)
}

// entry is one record line: a slot and its blob (line.go), and
// where its slot starts in contents.raw when the line is there as read
// (0 when it is not: a record written since). A run of entries whose lines
// lie together in raw is written out as one span of it (lineWriter.entries).
type entry struct {
	slot, blob string
	at         int
}

// text is the length of e's line as the file holds it, `"<slot>":"<blob>"`.
func (e *entry) text() int { return len(`"`) + slotHexSize + len(`":"`) + len(e.blob) + len(`"`) }

func compareSlot(e entry, slot string) int { return strings.Compare(e.slot, slot) }

// parseVault checks the frame of a vault file (header, trailer) and keeps
// the record lines unindexed.
func parseVault(data string) (contents, error) {
	nl := strings.IndexByte(data, '\n')
	if nl < 0 || !strings.HasSuffix(data, fileTrailer) {
		return contents{}, fmt.Errorf("not an arca vault file (truncated?)")
	}
	hdr, err := parseHeader(data[:nl])
	if err != nil {
		return contents{}, fmt.Errorf("line 1: %w", err)
	}
	raw := data[nl+1 : len(data)-len(fileTrailer)]
	if raw != "" && raw[len(raw)-1] != '\n' {
		return contents{}, fmt.Errorf("malformed last record line")
	}
	return contents{hdr: hdr, raw: raw}, nil
}

// index parses every record line strictly: layout, slots in strictly
// increasing order.
func (c *contents) index() error {
	if c.indexed {
		return nil
	}
	raw := c.raw
	records := strings.Count(raw, "\n")
	entries, byPrefix := make([]entry, 0, records), make(map[uint64]entry, records)
	var gen uint64
	for off, lineNo := 0, 2; off < len(raw); lineNo++ {
		end := off + strings.IndexByte(raw[off:], '\n')
		slot, blob, ok := parseRecordLine(raw[off:end], end == len(raw)-1)
		if !ok {
			return fmt.Errorf("line %d: malformed record line", lineNo)
		}
		if n := len(entries); n > 0 && entries[n-1].slot >= slot {
			return fmt.Errorf("line %d: record out of order or duplicated", lineNo)
		}
		e := entry{slot, blob, off + 1}
		p, _ := splitBlob(blob) // checked by parseRecordLine
		gen = max(gen, p.gen)
		entries = append(entries, e)
		byPrefix[slotPrefix(slot)] = e
		off = end + 1
	}
	if newest, ok := newestCommit(c.hdr.Commits); ok && newest != gen {
		return fmt.Errorf("line 1: vault header's newest commit is of generation %d, its lines' highest generation is %d", newest, gen)
	}
	c.entries, c.byPrefix, c.indexed, c.gen = entries, byPrefix, true, gen
	return nil
}

// slotPrefix is the first 64 bits of a slot id. Slots are keyed hashes, so
// prefixes are as good as unique; the index keys on them because a map of
// integers costs a get fewer cache misses than a map of strings.
func slotPrefix(slot string) uint64 {
	var b [8]byte
	hex.Decode(b[:], []byte(slot[:16]))
	return binary.BigEndian.Uint64(b[:])
}

// indexed looks slot up in the index. Slots sharing a prefix (which a keyed
// hash makes all but impossible) sit next to each other in entries and are
// found by binary search.
func (c *contents) lookupIndexed(slot string) (string, bool) {
	e, ok := c.byPrefix[slotPrefix(slot)]
	switch {
	case !ok:
		return "", false
	case e.slot == slot:
		return e.blob, true
	}
	if i, found := slices.BinarySearchFunc(c.entries, slot, compareSlot); found {
		return c.entries[i].blob, true
	}
	return "", false
}

func parseHeader(line string) (header, error) {
	var h header
	if !strings.HasPrefix(line, linePrefix) || !strings.HasSuffix(line, lineSuffix) {
		return h, fmt.Errorf("malformed vault header")
	}
	raw := line[len(linePrefix) : len(line)-len(lineSuffix)]
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, fmt.Errorf("malformed vault header")
	}
	// Canonical form only: re-encoding must give the same bytes, which also
	// rules out duplicate keys and trailing data.
	if again, err := json.Marshal(h); err != nil || string(again) != raw {
		return h, fmt.Errorf("vault header is not in canonical form")
	}
	if h.Format != fileFormat && h.Format != formatV1 {
		return h, fmt.Errorf("unsupported vault format")
	}
	if id, err := hex.DecodeString(h.VaultID); err != nil || len(id) != seal.VaultIDSize || hex.EncodeToString(id) != h.VaultID {
		return h, fmt.Errorf("malformed vault id")
	}
	if len(h.DataKey) == 0 || len(h.DataKey) > seal.MaxWrapped {
		return h, fmt.Errorf("malformed wrapped data key")
	}
	if err := checkCommits(h.Commits); err != nil {
		return h, err
	}
	return h, nil
}

// parseRecordLine splits `"<slot>":"<blob>"` (plus "," unless last); the
// blob must have one of the forms of line.go.
func parseRecordLine(line string, last bool) (slot, blob string, ok bool) {
	if !last {
		if !strings.HasSuffix(line, ",") {
			return "", "", false
		}
		line = line[:len(line)-1]
	}
	const pre = 1 + slotHexSize + 3 // "slot":"
	if len(line) < pre+1 || line[0] != '"' || line[1+slotHexSize:pre] != `":"` || line[len(line)-1] != '"' {
		return "", "", false
	}
	slot, blob = line[1:1+slotHexSize], line[pre:len(line)-1]
	for i := 0; i < len(slot); i++ {
		if c := slot[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", "", false
		}
	}
	// A quote or backslash would make the line mean something else to a
	// JSON reader than to arca: another key, an escape.
	if strings.IndexByte(blob, '"') >= 0 || strings.IndexByte(blob, '\\') >= 0 {
		return "", "", false
	}
	if _, ok := splitBlob(blob); !ok {
		return "", "", false
	}
	return slot, blob, true
}

// change is one write of a batch as the file is written: the slot it
// writes, in binary (a batch holds one per write), and the write's place
// in the batch.
type change struct {
	slot [seal.SlotSize]byte
	i    int32
}

// writeVault writes c in the canonical layout with the changes of a batch
// merged in (sorted by slot, each slot at most once), in one pass over c's
// records. sealed gives each change's record (its slot in hex beside it),
// sealed and base64-encoded, or nil when the write drops it; its buffer
// need only last until the next call. The first error, of sealed or of w,
// stops the write. size is the size of the file it makes, when known (0
// when not): the write buffer is sized to it (writeBuffer). loose is how
// many of c's records it wrote line by line, not in spans of the lines as
// read (see lineWriter.entries).
func writeVault(w io.Writer, c *contents, changes []change, size int64, sealed func(ch change, slot string) ([]byte, error)) (loose int, err error) {
	hb, err := json.Marshal(c.hdr)
	if err != nil {
		return 0, err
	}
	lw := lineWriter{bw: bufio.NewWriterSize(w, writeBuffer(size))}
	lw.bw.WriteString(linePrefix)
	lw.bw.Write(hb)
	lw.bw.WriteString(lineSuffix)
	mergeSlots(c.entries, changes, changeSlot,
		func(es []entry) { lw.entries(c.raw, es) },
		func(ch *change, slot string, _ *entry) {
			if lw.err != nil {
				return
			}
			b, err := sealed(*ch, slot)
			if err != nil {
				lw.err = err
			} else if b != nil {
				lw.line(slot, b, "")
			}
		})
	if lw.err != nil {
		return lw.loose, lw.err
	}
	lw.bw.WriteString("\n" + fileTrailer)
	return lw.loose, lw.bw.Flush()
}

// Write buffer bounds: a file of up to maxWriteBuffer bytes goes out in
// one write from a buffer of its own size, a larger one in writes of
// maxWriteBuffer; minWriteBuffer when the size is not known.
const (
	minWriteBuffer = 4 << 10
	maxWriteBuffer = 64 << 10
)

// writeBuffer is the size of the buffer a file of size bytes is written
// through.
func writeBuffer(size int64) int {
	if size <= 0 {
		return minWriteBuffer
	}
	return int(min(size, maxWriteBuffer))
}

// lineWriter writes record lines, a comma between two, and keeps the
// first error.
type lineWriter struct {
	bw    *bufio.Writer
	lines int
	loose int // records of the contents written line by line (entries)
	err   error
}

// line writes the record line of slot; its blob is b, or s when b is nil.
func (lw *lineWriter) line(slot string, b []byte, s string) {
	if lw.err != nil {
		return
	}
	if lw.lines > 0 {
		lw.bw.WriteByte(',')
	}
	lw.lines++
	lw.bw.WriteString("\n\"")
	lw.bw.WriteString(slot)
	lw.bw.WriteString(`":"`)
	lw.bw.Write(b)
	lw.bw.WriteString(s)
	_, lw.err = lw.bw.WriteString(`"`)
}

// entries writes the record lines of es, entries of the contents whose
// record lines as read are raw. Lines that lie one after another in raw
// are written as one span of it: between two lines raw holds ",\n", as the
// file does. A line not in raw is written on its own.
func (lw *lineWriter) entries(raw string, es []entry) {
	for len(es) > 0 && lw.err == nil {
		if es[0].at == 0 {
			lw.line(es[0].slot, nil, es[0].blob)
			lw.loose++
			es = es[1:]
			continue
		}
		from := es[0].at - 1 // the line's opening quote
		to := from + es[0].text()
		n := 1
		for ; n < len(es) && es[n].at != 0 && es[n].at-1 == to+len(",\n"); n++ {
			to = es[n].at - 1 + es[n].text()
		}
		if lw.lines > 0 {
			lw.bw.WriteByte(',')
		}
		lw.lines += n
		lw.bw.WriteByte('\n')
		_, lw.err = lw.bw.WriteString(raw[from:to])
		es = es[n:]
	}
}

// decodeBlob decodes a sealed part of a line from base64, accepting only
// the canonical encoding: a lax decoder ignores the padding bits of the last character,
// and even a strict one skips CR and LF, so a changed file would decode to
// the same record and the change would go unnoticed.
func decodeBlob(b64 string) ([]byte, error) { return appendBlob(nil, b64) }

// appendBlob is decodeBlob appending to dst, for callers that reuse a buffer.
func appendBlob(dst []byte, b64 string) ([]byte, error) {
	out, err := base64.StdEncoding.Strict().AppendDecode(dst, []byte(b64))
	if err != nil || base64.StdEncoding.EncodedLen(len(out)-len(dst)) != len(b64) {
		return nil, seal.ErrAuth
	}
	return out, nil
}

func encodeBlob(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// appendEncoded appends the base64 of a sealed part of a line to dst.
func appendEncoded(dst, b []byte) []byte { return base64.StdEncoding.AppendEncode(dst, b) }
