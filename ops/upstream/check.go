package upstream

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arca-secrets/arca/internal/glob"
)

// Kind is what a Refusal is, named as the wire code the ops layer answers.
type Kind string

// The kinds of Refusal.
const (
	BadRequest Kind = "bad_request" // the Call is malformed, or tries to carry credentials or routing
	Denied     Kind = "denied"      // the service does not allow the method or the path
)

// Refusal is why Check (and so Do and Open) refused a Call before any
// network. Msg names the header, parameter, method or path at fault,
// never a header value, a query value or the body.
type Refusal struct {
	Kind Kind
	Msg  string
}

// Error returns Msg.
func (r *Refusal) Error() string { return r.Msg }

func refuse(kind Kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Check validates c against the service without any network, and returns
// the path decoded once and clean (what the path globs matched). A
// header that carries credentials or routing, an invalid header, a query
// that sets the auth parameter, a path that is not absolute or holds a
// control character, "?" or "#", or a Call past its bounds (64 header
// values, 8 KiB of header names and values, 64 query keys) is BadRequest;
// a method the service does not allow, or a path that is not clean or
// matches none of its globs, is Denied.
func (s *Service) Check(c Call) (cleanPath string, err error) {
	if r := s.checkHeader(c.Header); r != nil {
		return "", r
	}
	if r := s.checkQuery(c.Query); r != nil {
		return "", r
	}
	if !slices.Contains(s.cfg.Methods, c.Method) {
		return "", refuse(Denied, "method %q is not allowed for service %s", c.Method, s.name)
	}
	return s.checkPath(c.Path)
}

// checkHeader refuses a header the caller may not set, or an invalid one.
func (s *Service) checkHeader(h http.Header) *Refusal {
	n, size := 0, 0
	for k, vs := range h {
		if !validHeaderName(k) {
			return refuse(BadRequest, "header name %q is not valid", k)
		}
		if s.refusedHeader(http.CanonicalHeaderKey(k)) {
			return refuse(BadRequest, "header %s carries credentials or routing: arca sets it or refuses it", http.CanonicalHeaderKey(k))
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return refuse(BadRequest, "header %s has an invalid value", http.CanonicalHeaderKey(k))
			}
			n, size = n+1, size+len(k)+len(v)
		}
	}
	if n > maxHeaders || size > maxHeaderBytes {
		return refuse(BadRequest, "headers: %d values of %d bytes, at most %d values of %d bytes", n, size, maxHeaders, maxHeaderBytes)
	}
	return nil
}

// refusedHeader reports whether a caller may not set header k (canonical):
// it carries credentials or routing (Authorization, Cookie, Host, any
// Proxy-*, the service's auth header), belongs to the connection
// (hop-by-hop) or the framing (Content-Length), or asks the upstream, or a
// gateway before it, for another method, path or host than the ones
// checked: the method overrides, the URL overrides, Forwarded and any
// X-Forwarded-*.
func (s *Service) refusedHeader(k string) bool {
	switch k {
	case "Authorization", "Cookie", "Host", "Content-Length",
		"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"X-Http-Method-Override", "X-Http-Method", "X-Method-Override",
		"X-Original-Url", "X-Rewrite-Url", "Forwarded":
		return true
	}
	return strings.HasPrefix(k, "Proxy-") || strings.HasPrefix(k, "X-Forwarded-") ||
		s.cfg.Auth == "header" && strings.EqualFold(k, s.cfg.Header)
}

// checkQuery refuses a query past its bound or one that sets the auth
// parameter (in any case: an upstream may not tell them apart).
func (s *Service) checkQuery(q url.Values) *Refusal {
	if len(q) > maxQueryKeys {
		return refuse(BadRequest, "query: %d parameters, at most %d", len(q), maxQueryKeys)
	}
	if s.cfg.Auth != "query" {
		return nil
	}
	for k := range q {
		if strings.EqualFold(k, s.cfg.QueryParam) {
			return refuse(BadRequest, "query parameter %q carries the credential: arca sets it", k)
		}
	}
	return nil
}

// checkPath checks a path as sent (percent-encoded, relative to the base
// URL's path) and returns it decoded once. Decoding once is what the
// globs match and what the upstream is expected to see: "%252e" stays
// "%2e" to both.
func (s *Service) checkPath(raw string) (string, error) {
	if !strings.HasPrefix(raw, "/") {
		return "", refuse(BadRequest, "path must start with /")
	}
	if strings.ContainsAny(raw, "?#") || hasControl(raw) {
		return "", refuse(BadRequest, "path has a control character, ? or # (the query goes in query)")
	}
	if lower := strings.ToLower(raw); strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return "", refuse(Denied, "path %q is not allowed: an encoded / or \\", raw)
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", refuse(BadRequest, "path has an invalid percent-encoding")
	}
	if hasControl(p) || !utf8.ValidString(p) {
		return "", refuse(BadRequest, "path decodes to a control character or invalid UTF-8")
	}
	if strings.Contains(p, "..") || strings.Contains(p, "//") || strings.Contains(p, `\`) || path.Clean(p) != p {
		return "", refuse(Denied, "path %q is not allowed: not clean once decoded", raw)
	}
	for _, g := range s.cfg.Paths {
		if glob.Match(g, p) {
			return p, nil
		}
	}
	return "", refuse(Denied, "path %q is not allowed for service %s", p, s.name)
}

// hasControl reports whether s holds an ASCII control character (NUL
// included) or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// validHeaderName reports whether k is a header name net/http sends: a
// non-empty token (RFC 9110).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v is a header value net/http sends: no
// control character but a tab.
func validHeaderValue(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f) })
}
