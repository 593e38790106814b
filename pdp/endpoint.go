package pdp

import (
	"net"
	"net/url"
	"strings"
)

// authzenPath is the AuthZEN 1.0 access evaluation endpoint, the path an
// authzen url without one gets.
const authzenPath = "/access/v1/evaluation"

// maxURL bounds url and http_path.
const maxURL = 2048

// endpoint is where an HTTP PDP is reached: a TCP address on loopback or a
// unix socket, and the URL each request is sent to.
type endpoint struct {
	network string // "tcp" or "unix"
	address string // host:port, or the socket's path
	url     string // the request URL (for a socket, http://localhost + the path)
}

// EndpointProblem says what is wrong with an HTTP PDP's url, http_path and
// api, or returns "". Each message starts with the key at fault. The url is
// either http://HOST[:PORT]/PATH, HOST a loopback address (127.0.0.0/8, ::1
// in brackets, or localhost), or unix:/ABSOLUTE/SOCKET with the request path
// in httpPath. An opa url names the policy's data path (/v1/data/...); an
// authzen one may leave the path out for /access/v1/evaluation.
func EndpointProblem(rawURL, httpPath, api string) string {
	_, why := parseEndpoint(rawURL, httpPath, api)
	return why
}

func parseEndpoint(rawURL, httpPath, api string) (endpoint, string) {
	switch {
	case api == "":
		return endpoint{}, "api is required with url (opa or authzen)"
	case api != APIOPA && api != APIAuthZEN:
		return endpoint{}, "api " + quoteShort(api) + " is not opa or authzen"
	case len(rawURL) > maxURL || len(httpPath) > maxURL:
		return endpoint{}, "url and http_path are at most 2048 bytes each"
	case strings.ContainsFunc(rawURL+httpPath, func(r rune) bool { return r < 0x21 || r == 0x7f }):
		return endpoint{}, "url and http_path may hold no space or control character"
	}
	if sock, ok := strings.CutPrefix(rawURL, "unix:"); ok {
		return unixEndpoint(sock, httpPath, api)
	}
	if httpPath != "" {
		return endpoint{}, "http_path is only for a unix: url (put the path in the http:// url)"
	}
	return tcpEndpoint(rawURL, api)
}

func unixEndpoint(sock, httpPath, api string) (endpoint, string) {
	if !strings.HasPrefix(sock, "/") {
		return endpoint{}, "url unix:<socket> needs an absolute socket path"
	}
	if httpPath == "" && api == APIAuthZEN {
		httpPath = authzenPath
	}
	if why := pathProblem(httpPath, "http_path", api); why != "" {
		return endpoint{}, why
	}
	return endpoint{network: "unix", address: sock, url: "http://localhost" + httpPath}, ""
}

func tcpEndpoint(rawURL, api string) (endpoint, string) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || u.Scheme != "http" || u.Opaque != "" || u.Host == "":
		return endpoint{}, "url must be http://<loopback address>[:port]/<path> or unix:<socket path>"
	case u.User != nil:
		return endpoint{}, "url may not hold a user or password"
	case u.Fragment != "" || strings.Contains(rawURL, "#"):
		return endpoint{}, "url may not hold a #fragment"
	case !loopbackHost(u.Hostname()):
		return endpoint{}, "url host must be a loopback address (127.0.0.1, [::1] or localhost): arca sends the PDP its requests' claims"
	}
	if (u.Path == "" || u.Path == "/") && api == APIAuthZEN {
		u.Path = authzenPath
	}
	if why := pathProblem(u.Path, "url", api); why != "" {
		return endpoint{}, why
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return endpoint{network: "tcp", address: net.JoinHostPort(u.Hostname(), port), url: u.String()}, ""
}

func pathProblem(p, key, api string) string {
	switch {
	case p == "" || p == "/":
		if api == APIOPA {
			return key + " needs the policy's path for api opa, e.g. /v1/data/arca/decision"
		}
		return key + " needs a path"
	case !strings.HasPrefix(p, "/"):
		return key + " path must start with /"
	}
	return ""
}

// loopbackHost reports whether host is a loopback IP address or localhost.
// The dialer checks again the address it connects to (see dialLoopback).
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// quoteShort quotes s for a message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
