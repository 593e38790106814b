// Command echo is the baseline for arca serve's benchmarks: the barest
// NDJSON loop. It decodes each request line with encoding/json, answers it
// with an encoded response echoing the id and op, and flushes only when
// input runs dry. Whatever arca serve costs beyond this is arca's: the
// vault, the audit wire, the checks.
//
// With -wire it also pays what arca's audit wire costs whoever runs it: a
// line the size of a get's event for each request, on stderr, chained by
// the SHA-256 of the line before it, and flushed before the responses it
// comes before; and each response is the size of a get's. What arca costs
// beyond that is its own work: the checks, the vault, the encoders.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"strings"
)

type request struct {
	ID json.RawMessage `json:"id"`
	Op string          `json:"op"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	OK     bool            `json:"ok"`
	Result map[string]any  `json:"result"`
}

// paddedResponse is -wire's response: the size of arca's.
type paddedResponse struct {
	response
	Pad string `json:"pad"`
}

// The padding that makes -wire's lines the size of arca's for a get of a
// 38-byte secret: an event of 256 bytes, a response of 220.
var (
	eventPad    = strings.Repeat("e", 164)
	responsePad = strings.Repeat("r", 171)
)

func main() {
	wire := flag.Bool("wire", false, "write an audit-sized chained line to stderr per request")
	flag.Parse()
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	errw := bufio.NewWriterSize(os.Stderr, 64<<10)
	flush := func() {
		errw.Flush()
		out.Flush()
	}
	enc := json.NewEncoder(out)
	var prev [2 * sha256.Size]byte
	var ev []byte
	seq := uint64(0)
	for {
		if n := in.Buffered(); n == 0 {
			flush()
		} else if b, _ := in.Peek(n); bytes.IndexByte(b, '\n') < 0 {
			flush()
		}
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			if json.Unmarshal(line, &req) != nil {
				req.ID = json.RawMessage("null")
			}
			resp := response{ID: req.ID, OK: true, Result: map[string]any{"op": req.Op}}
			if *wire {
				seq++
				ev = strconv.AppendUint(append(ev[:0], `{"seq":`...), seq, 10)
				ev = append(append(append(ev, `,"pad":"`...), eventPad...), `","prev":"`...)
				ev = append(append(ev, prev[:]...), "\"}"...)
				sum := sha256.Sum256(ev)
				hex.Encode(prev[:], sum[:])
				errw.Write(append(ev, '\n'))
				enc.Encode(paddedResponse{resp, responsePad})
			} else {
				enc.Encode(resp)
			}
		}
		if err != nil {
			flush()
			return
		}
	}
}
