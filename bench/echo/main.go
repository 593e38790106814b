// Command echo is the baseline for arca serve's benchmarks: the barest
// NDJSON loop. It decodes each request line with encoding/json, answers it
// with an encoded response echoing the id and op, and flushes only when
// input runs dry. Whatever arca serve costs beyond this is arca's: the
// vault, the audit wire, the checks.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
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

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	enc := json.NewEncoder(out)
	for {
		if n := in.Buffered(); n == 0 {
			out.Flush()
		} else if b, _ := in.Peek(n); bytes.IndexByte(b, '\n') < 0 {
			out.Flush()
		}
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			if json.Unmarshal(line, &req) != nil {
				req.ID = json.RawMessage("null")
			}
			enc.Encode(response{ID: req.ID, OK: true, Result: map[string]any{"op": req.Op}})
		}
		if err != nil {
			out.Flush()
			return
		}
	}
}
