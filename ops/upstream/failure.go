package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// The causes of a Failure (SPEC §13's details.cause of upstream_failed).
const (
	CauseDNS      = "dns"             // the host could not be resolved
	CauseConnect  = "connect"         // no address accepted a connection
	CauseTLS      = "tls"             // the TLS handshake failed: an unknown authority, a wrong name, not TLS
	CauseTimeout  = "timeout"         // the exchange did not end within timeout_ms
	CauseBlocked  = "blocked_address" // every address is one allow_private guards
	CauseRedirect = "redirect"        // a redirect the service's follow_redirects does not follow
	CauseRead     = "read"            // the response was malformed or broken off
)

// Failure is an exchange that did not complete. Msg names the service's
// host and port and what happened; it never holds a header value, a
// query, a body or the credential, nor any text the upstream sent.
type Failure struct {
	Cause string
	Msg   string
}

// Error returns Msg.
func (f *Failure) Error() string { return f.Msg }

// timedOut is the Failure of an exchange past its deadline, while doing
// what stage says.
func (s *Service) timedOut(stage string) *Failure {
	return &Failure{Cause: CauseTimeout, Msg: fmt.Sprintf("%s: no answer within %d ms (%s)", s.addr, s.timeout.Milliseconds(), stage)}
}

// failure maps an error of the exchange, under ctx, to a Failure: the
// deadline passed is "timeout", a Failure of the dial or of a redirect is
// itself, anything else after the connection is "read". A caller's own
// cancellation is not a Failure: it is returned as context.Canceled.
func (s *Service) failure(ctx context.Context, err error, stage string) error {
	var f *Failure
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return s.timedOut(stage)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", s.addr, context.Canceled)
	case errors.As(err, &f):
		return f
	}
	return &Failure{Cause: CauseRead, Msg: fmt.Sprintf("%s: %s: %s", s.addr, stage, phrase(err))}
}

// phrase says what err was in words of arca's own: net/http's error texts
// may quote what the upstream sent (a malformed status line, a header),
// which may echo the request and its credential, so none is passed on.
func phrase(err error) string {
	var errno syscall.Errno
	var ne net.Error
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed early"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return "a malformed or broken response"
}

// tlsPhrase says why a handshake failed. crypto/tls and crypto/x509
// describe the certificate and the protocol, which come before any
// request and hold nothing of it; a failure of the connection under the
// handshake is told as phrase tells it.
func tlsPhrase(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return phrase(err)
	}
	return err.Error()
}
