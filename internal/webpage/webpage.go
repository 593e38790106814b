// Package webpage holds what arca's local web pages share: the headers
// every answer carries (a strict Content-Security-Policy among them), the
// rule a bearer token follows, and an http.Server with bounds on what a
// request may be and take.
//
//	MaxHeaderBytes  16 KiB  a request's header
//	ReadTimeout     10 s    reading a request, its header included
//	WriteTimeout    30 s    writing an answer
//	IdleTimeout     60 s    an idle kept-alive connection
package webpage

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Bounds on what a request may be and take.
const (
	MaxHeaderBytes = 16 << 10
	ReadTimeout    = 10 * time.Second
	WriteTimeout   = 30 * time.Second
	IdleTimeout    = 60 * time.Second
)

// CSP is the pages' Content-Security-Policy: their own script and style,
// nothing inline, nothing from anywhere else, no frames, no forms (a page
// sends what it sends with fetch, to its own origin).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// SetHeaders sets on h the headers every answer of a page carries: CSP,
// no sniffing of types, no referrer, no caching, and no reading of an
// answer by another origin's page.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// NewServer is an http.Server of h with the bounds above.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Loopback reports whether host (of a HOST:PORT) is a loopback IP
// address, or localhost.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// MinToken is the fewest bytes a page's token may have.
const MinToken = 16

// TokenChars names the characters a token may hold: those of a Bearer
// token (RFC 6750), which an Authorization header carries as they are.
const TokenChars = "the letters A-Z and a-z, the digits 0-9 and - . _ ~ + / (and = only at its end)"

// CheckToken refuses a token that is empty or holds a byte outside
// TokenChars. Its error says where, never what the token is.
func CheckToken(token string) error {
	if token == "" {
		return errors.New("a token is required")
	}
	body := strings.TrimRight(token, "=")
	for i := range len(body) {
		if !tokenByte(body[i]) {
			return fmt.Errorf("the token holds a character that is not allowed (at byte %d): the characters allowed are %s", i+1, TokenChars)
		}
	}
	if body == "" {
		return fmt.Errorf("the token is only =: the characters allowed are %s", TokenChars)
	}
	return nil
}

func tokenByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~+/", b) >= 0
}
