package upstream

import (
	"context"
	"io"
	"net/http"
	"slices"
)

// Body is the body of a response Open returns. It reads the upstream's
// body up to the service's max_response_bytes and then ends (io.EOF),
// never reading past the cap but for one byte that tells whether more was
// there (only when no Content-Length said so). Its reads fail with a
// *Failure: "timeout" once the exchange's deadline passed, else "read".
// Close ends the exchange.
type Body struct {
	s         *Service
	ctx       context.Context
	cancel    context.CancelFunc
	rc        io.ReadCloser
	left      int64 // bytes still allowed
	probe     bool  // at the cap, read one byte more to learn whether the body went on
	truncated bool
	err       error // what every later Read returns
}

// newBody wraps resp's body, under the exchange's ctx (which cancel ends).
func (s *Service) newBody(ctx context.Context, cancel context.CancelFunc, resp *http.Response) *Body {
	return &Body{
		s: s, ctx: ctx, cancel: cancel, rc: resp.Body, left: s.max,
		probe:     resp.ContentLength < 0,
		truncated: resp.ContentLength > s.max,
	}
}

// Read reads the body, up to the cap.
func (b *Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		b.err = io.EOF
		if b.probe {
			var one [1]byte
			n, err := io.ReadFull(b.rc, one[:])
			b.truncated = n == 1
			if n == 0 && err != io.EOF {
				b.err = b.s.failure(b.ctx, err, "reading the body")
			}
		}
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	switch {
	case err == io.EOF:
		b.err = io.EOF
	case err != nil:
		b.err = b.s.failure(b.ctx, err, "reading the body")
	}
	return n, b.err
}

// Truncated reports whether the body went on past the cap: known once a
// Read returned io.EOF.
func (b *Body) Truncated() bool { return b.truncated }

// Close closes the body and ends the exchange.
func (b *Body) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// readAll reads the body to its end or its cap into a buffer of size
// first, grown as needed but never past the cap.
func (b *Body) readAll(first int64) ([]byte, error) {
	buf := make([]byte, 0, first)
	for {
		if len(buf) == cap(buf) && int64(cap(buf)) < b.s.max {
			buf = slices.Grow(buf, int(min(int64(cap(buf)), b.s.max-int64(cap(buf)))))
		}
		n, err := b.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
