package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxExactID is the largest magnitude of a numeric id the SDK answers
// with the id it was given: it reads numbers as float64.
const maxExactID = 1 << 53

// idProblem says what is wrong with the id of a request line, if
// anything, and the id as given (raw, to answer with; nil when it
// cannot be). MCP wants a request's id a string or an integer, never
// null: the SDK would take a null id for a notification's and never
// answer, and answer a fractional or huge number with another id.
func idProblem(line []byte) (raw json.RawMessage, problem string) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID == nil || m.ID[0] == '"' {
		return nil, ""
	}
	if bytes.Equal(m.ID, []byte("null")) {
		return nil, "a request's id must be a string or an integer, not null"
	}
	const tooBig = "a request's numeric id must be an integer, of magnitude at most 2^53"
	if n, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		if n > maxExactID || n < -maxExactID {
			return m.ID, tooBig
		}
		return nil, ""
	}
	f, err := strconv.ParseFloat(string(m.ID), 64)
	if err != nil || f != float64(int64(f)) || f > maxExactID || f < -maxExactID {
		return m.ID, tooBig
	}
	return nil, ""
}
