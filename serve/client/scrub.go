package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"unicode/utf8"
)

// scrubChunk is the most text one scrub request of a ScrubWriter carries:
// escaped as JSON it stays far under serve's 4 MiB line cap.
const scrubChunk = 512 << 10

// ScrubWriter passes what is written to it on to another writer with every
// value the session released redacted: an io.WriteCloser an agent host
// pipes a tool's output through before a model reads it. Each Write is
// sent as the next chunk of one scrub stream, and serve answers what it can
// pass on (it holds back what could be the start of a value); Close ends
// the stream and writes the rest. Any split of the output into writes gives
// the same text. Bytes that are not UTF-8 are written as U+FFFD (a value is
// UTF-8, so none is lost). A ScrubWriter is not safe for concurrent use.
type ScrubWriter struct {
	c          *Client
	ctx        context.Context
	w          io.Writer
	stream     string
	env        string
	tail       []byte // an unfinished UTF-8 character, sent with the next write
	err        error
	open       bool // serve has the stream open
	Redactions map[string]int64
	// Unscrubbable is the refs of the released values serve cannot
	// redact (under 4 bytes), as its last answer listed them.
	Unscrubbable []string
}

// NewScrubWriter returns a ScrubWriter that writes to w through the scrub
// stream named stream (1 to 128 bytes, one no other writer of the session
// uses). env, when not "", is sent as each request's env. Redactions
// counts the placeholders written, by ref.
func (c *Client) NewScrubWriter(ctx context.Context, w io.Writer, stream, env string) *ScrubWriter {
	return &ScrubWriter{c: c, ctx: ctx, w: w, stream: stream, env: env, Redactions: map[string]int64{}}
}

// Write sends p as the next chunk of the stream and writes what serve
// passes on. It reports len(p) unless the call or the writer failed,
// whose error it returns, then and on every later call.
func (s *ScrubWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	text := append(s.tail, p...)
	n := len(text)
	for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRune(text[i:]) {
				n = i
			}
			break
		}
	}
	s.tail = bytes.Clone(text[n:])
	if err := s.send(text[:n], false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends the stream: serve passes on what it held back, and so does
// Close. It does not close the underlying writer.
func (s *ScrubWriter) Close() error {
	if s.err != nil {
		return s.err
	}
	if err := s.send(s.tail, true); err != nil {
		return err
	}
	s.tail = nil
	s.err = errors.New("client: write to a closed ScrubWriter")
	return nil
}

// send sends text in chunks, the last one final when final is set.
func (s *ScrubWriter) send(text []byte, final bool) error {
	str := string(bytes.ToValidUTF8(text, []byte("\uFFFD")))
	for {
		chunk := str
		if len(chunk) > scrubChunk {
			cut := scrubChunk
			for cut > 0 && !utf8.RuneStart(chunk[cut]) {
				cut--
			}
			chunk = chunk[:cut]
		}
		str = str[len(chunk):]
		last := final && str == ""
		if chunk == "" && !last {
			return nil
		}
		if err := s.call(chunk, last); err != nil {
			s.err = err
			return err
		}
		if str == "" {
			return nil
		}
	}
}

// call sends one chunk and writes its answer.
func (s *ScrubWriter) call(chunk string, final bool) error {
	if final && !s.open && chunk == "" {
		return nil // nothing was ever sent: no stream to end
	}
	res, err := s.c.Scrub(s.ctx, Request{Text: chunk, Stream: s.stream, Final: &final, Env: s.env})
	if err != nil {
		return err
	}
	s.open = !final
	for _, r := range res.Redactions {
		s.Redactions[r.Ref] += r.Count
	}
	s.Unscrubbable = res.Unscrubbable
	_, err = io.WriteString(s.w, res.Text)
	return err
}
