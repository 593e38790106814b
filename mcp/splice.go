package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
)

// maxHeld bounds how many results wait between a tool's handler and the
// transport at once; past it, a result goes through the SDK's encoder.
const maxHeld = 64

// spliced carries a tool result's structured content from the handler
// to the transport past the SDK's encoder. The SDK encodes a response
// with encoding/json, which checks and compacts raw JSON once for each
// MarshalJSON it is nested in (twice for a tool result): the most a
// list costs. The handler gives the SDK a placeholder string instead,
// and the transport writes the bytes arca encoded, scrubbed and
// bounded, in its place. A placeholder holds a random key of the
// session's, so that no text a client can get into a result is taken
// for one. A result the SDK never writes (the session ended first) stays
// held until the session ends: at most maxHeld, past which results go
// through the SDK's encoder, slower and still whole.
type spliced struct {
	mu     sync.Mutex
	prefix []byte // `"structuredContent":"` and the session's key
	next   uint64
	held   map[string][]byte
}

func newSpliced() *spliced {
	key := make([]byte, 16)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return &spliced{prefix: []byte(`"structuredContent":"` + hex.EncodeToString(key) + "-"), held: map[string][]byte{}}
}

// hold keeps b for the transport and returns the placeholder the SDK
// encodes in its place; b itself when too many are held already.
func (p *spliced) hold(b json.RawMessage) any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.held) >= maxHeld {
		return b
	}
	p.next++
	n := strconv.FormatUint(p.next, 10)
	p.held[n] = b
	key := p.prefix[len(`"structuredContent":"`):]
	return json.RawMessage(`"` + string(key) + n + `"`)
}

// splice returns result, an encoded tool result, with its placeholder
// replaced by the bytes it holds; result as it is when it has none.
func (p *spliced) splice(result []byte) []byte {
	i := bytes.Index(result, p.prefix)
	if i < 0 {
		return result
	}
	start := i + len(`"structuredContent":`)
	digits := i + len(p.prefix)
	end := bytes.IndexByte(result[digits:], '"')
	if end < 0 {
		return result
	}
	end += digits
	p.mu.Lock()
	b, ok := p.held[string(result[digits:end])]
	delete(p.held, string(result[digits:end]))
	p.mu.Unlock()
	if !ok {
		return result
	}
	out := make([]byte, 0, len(result)+len(b))
	out = append(out, result[:start]...)
	out = append(out, b...)
	return append(out, result[end+1:]...)
}
