package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/internal/glob"
	"github.com/arca-secrets/arca/ops/ref"
)

// Bounds on services and actions beyond those of use.go.
const (
	maxUseName     = 64   // bytes of a service's or action's name
	maxPaths       = 64   // globs of a service's paths
	maxPathLen     = 1024 // bytes of one of them
	maxHeaderLen   = 128  // bytes of an auth header's name
	maxQueryParam  = 128  // bytes of an auth query parameter's name
	maxArgv        = 64   // entries of an action's argv
	maxArgvEntry   = 4096 // bytes of one of them
	maxArgsPattern = 1024 // bytes of an action's args
	maxActionEnv   = 64   // entries of an action's env
)

// allowedMethods lists the methods a service may allow, in the order
// messages name them.
func allowedMethods() []string {
	return []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
}

// useNameProblem checks the name of a [services.NAME] or [actions.NAME]
// table (kind: "service" or "action"); the message starts with its key.
func useNameProblem(table, kind, name string) string {
	why := ref.SegmentProblem(name)
	if why == "" && len(name) > maxUseName {
		why = "is longer than " + strconv.Itoa(maxUseName) + " bytes"
	}
	if why == "" {
		return ""
	}
	return table + "." + strconv.Quote(truncated(name)) + ": invalid " + kind + " name: " + why
}

// serviceProblem checks a [services.NAME] table; the message starts with
// the key, and never holds a value.
func serviceProblem(name string, s serviceDoc) string {
	if msg := useNameProblem("services", "service", name); msg != "" {
		return msg
	}
	for _, check := range []func(serviceDoc) string{baseURLProblem, credentialProblem, authProblem, otherProblem} {
		if msg := check(s); msg != "" {
			return "services." + name + "." + msg
		}
	}
	return ""
}

func baseURLProblem(s serviceDoc) string {
	if s.BaseURL == "" {
		return "base_url is required (as https://api.example.com)"
	}
	if _, why := normalBaseURL(s.BaseURL); why != "" {
		return "base_url " + why
	}
	return ""
}

func credentialProblem(s serviceDoc) string {
	if s.Credential == "" {
		return `credential is required: the ref of the secret the service is called with (as "arca://ci/github-token")`
	}
	if _, err := ref.Parse(s.Credential); err != nil {
		return "credential: " + err.Error()
	}
	return ""
}

// authProblem checks how a service's credential is sent: auth, and the
// key each kind needs and no other takes.
func authProblem(s serviceDoc) string {
	switch s.Auth {
	case "bearer", "basic", "header", "query":
	case "":
		return "auth is required: bearer, basic, header or query"
	default:
		return "auth must be bearer, basic, header or query"
	}
	for _, k := range []struct{ key, value, auth, example string }{
		{"username_ref", s.UsernameRef, "basic", "arca://ci/user"},
		{"header", s.Header, "header", "X-Api-Key"},
		{"query_param", s.QueryParam, "query", "api_key"},
	} {
		switch {
		case k.value != "" && s.Auth != k.auth:
			return k.key + " is only for auth " + k.auth
		case k.value == "" && s.Auth == k.auth:
			return k.key + " is required for auth " + k.auth + " (as " + strconv.Quote(k.example) + ")"
		}
	}
	switch {
	case s.UsernameRef != "":
		if _, err := ref.Parse(s.UsernameRef); err != nil {
			return "username_ref: " + err.Error()
		}
	case s.Header != "" && (len(s.Header) > maxHeaderLen || !isToken(s.Header)):
		return fmt.Sprintf("header must be an HTTP header name: 1 to %d of A-Za-z0-9 and !#$%%&'*+-.^_`|~", maxHeaderLen)
	case s.Header != "" && reservedHeader(s.Header):
		return "header must not be one that carries credentials, routing or framing " +
			"(Authorization, Cookie, Host, Proxy-*, Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Content-Length, Content-Type)"
	case s.QueryParam != "" && (len(s.QueryParam) > maxQueryParam || strings.ContainsFunc(s.QueryParam, notUnreserved)):
		return fmt.Sprintf("query_param must be 1 to %d of A-Za-z0-9 and -._~", maxQueryParam)
	}
	return ""
}

// otherProblem checks a service's methods, paths, bounds and redirects.
func otherProblem(s serviceDoc) string {
	if s.Methods != nil && len(s.Methods) == 0 {
		return `methods is empty (omit it to allow "GET" only)`
	}
	for _, msg := range []string{
		methodsProblem(s.Methods), pathsProblem(s.Paths),
		boundProblem("timeout_ms", s.TimeoutMS, MaxServiceTimeoutMS, DefaultServiceTimeoutMS),
		boundProblem("max_response_bytes", s.MaxResponseBytes, MaxResponseBytesCap, DefaultMaxResponseBytes),
	} {
		if msg != "" {
			return msg
		}
	}
	if f := s.FollowRedirects; f != "" && f != RedirectsNone && f != RedirectsSameOrigin {
		return "follow_redirects must be none or same-origin"
	}
	return ""
}

// methodsProblem checks a service's methods: known, upper case, once each.
func methodsProblem(ms []string) string {
	allowed := allowedMethods()
	for i, m := range ms {
		switch {
		case !slices.Contains(allowed, m):
			return fmt.Sprintf("methods[%d] is not one of %s (upper case)", i, strings.Join(allowed, ", "))
		case slices.Index(ms, m) < i:
			return "methods lists " + m + " twice"
		}
	}
	return ""
}

// pathsProblem checks a service's paths: globs over the decoded, cleaned
// path of a request.
func pathsProblem(paths []string) string {
	if len(paths) == 0 {
		return `paths is required: list the paths the service may reach ("/*" reaches all)`
	}
	if len(paths) > maxPaths {
		return fmt.Sprintf("paths lists more than %d globs", maxPaths)
	}
	for i, p := range paths {
		if why := pathProblem(p); why != "" {
			return fmt.Sprintf("paths[%d] %s", i, why)
		}
	}
	return ""
}

func pathProblem(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return `must start with "/" (as "/repos/*")`
	case len(p) > maxPathLen:
		return "is longer than " + strconv.Itoa(maxPathLen) + " bytes"
	case strings.Contains(p, ".."):
		return `holds "..": a request's path is matched once cleaned, so no path that reaches a glob holds ".."`
	case strings.Contains(p, "//"):
		return `holds "//": a request's path is matched once cleaned, so no path that reaches a glob holds "//"`
	case strings.Contains(p, "%"):
		return `holds "%": globs match the decoded path, so write the character itself ("/a b", not "/a%20b")`
	case strings.Contains(p, "#"):
		return `holds "#": a path has no fragment`
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "holds a control character"
	}
	if why := glob.Problem(p); why != "" {
		return "is not a valid glob: " + why
	}
	return ""
}

// boundProblem checks a count given for key: omitted (nil), or 1..hi.
func boundProblem(key string, v *int, hi, def int) string {
	if v == nil || 1 <= *v && *v <= hi {
		return ""
	}
	return fmt.Sprintf("%s must be 1..%d (omitted: %d)", key, hi, def)
}

// hostProblem checks a base URL's scheme, host and port.
func hostProblem(u *url.URL) string {
	host := u.Hostname()
	if host == "" {
		return "must name a host"
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "has a port outside 1..65535"
		}
	}
	switch {
	case u.Scheme == "https", u.Scheme == "http" && loopbackHost(host):
		return ""
	case u.Scheme == "http":
		return "must be https: http only to a loopback host (127.0.0.1, [::1] or localhost)"
	}
	return "must be an https URL (http only to a loopback host)"
}

// loopbackHost reports whether host is localhost or a loopback literal.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// basePathProblem checks a base URL's path: empty, or a clean prefix
// written as it is sent.
func basePathProblem(u *url.URL) string {
	if strings.Contains(u.EscapedPath(), "%") {
		return "path must be written as it is sent: no %, space or other character a URL path escapes"
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")
	if rest == "" {
		return ""
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return `path must be a clean prefix (as "/api"): no empty, "." or ".." segment`
		}
	}
	return ""
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), as a
// header name is.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// reservedHeader reports whether a header carries credentials, routing
// or framing, which no service's auth may take over.
func reservedHeader(h string) bool {
	h = strings.ToLower(h)
	switch h {
	case "authorization", "cookie", "host", "connection", "keep-alive", "te", "trailer",
		"transfer-encoding", "upgrade", "content-length", "content-type":
		return true
	}
	return strings.HasPrefix(h, "proxy-")
}

// notUnreserved reports a character that is not unreserved in a URL
// (RFC 3986 §2.3).
func notUnreserved(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-._~", r))
}
