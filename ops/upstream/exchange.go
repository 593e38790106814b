package upstream

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Do sends c with cred injected where the service's auth kind puts it
// (bearer: "Authorization: Bearer"; basic: "Authorization: Basic" of
// user:secret; header: the configured header; query: the configured
// parameter) and reads the response body up to max_response_bytes, all
// within timeout_ms. A Call Check refuses is a *Refusal; an exchange that
// fails is a *Failure; a credential that cannot go where the auth kind
// puts it (a line break in a header value) is a plain error. An upstream
// 4xx or 5xx is a Response like any other.
func (s *Service) Do(ctx context.Context, c Call, cred Credential) (*Response, error) {
	resp, err := s.Open(ctx, c, cred)
	if err != nil {
		return nil, err
	}
	b := resp.Body.(*Body)
	defer b.Close()
	// A body of known length fits with a byte to spare, so that the read
	// that finds its end needs no larger buffer.
	body, err := b.readAll(min(max(resp.ContentLength+1, 512), s.max))
	if err != nil {
		return nil, err
	}
	return &Response{
		Status:    resp.StatusCode,
		Header:    resp.Header,
		Body:      body,
		Truncated: b.Truncated(),
		BytesIn:   int64(len(c.Body)),
		BytesOut:  int64(len(body)),
	}, nil
}

// Open is Do for a streaming caller (a reverse proxy): it sends c as Do
// does and returns the response with its body unread and SafeHeader's
// headers only; its Request and Trailer are nil. The body is a *Body: it
// ends (io.EOF) at max_response_bytes, after which Truncated says whether
// more was there, and its reads fail with a *Failure ("timeout" past the
// deadline, else "read"). The whole exchange, the reading of the body
// included, is bounded by timeout_ms. The caller must Close the body.
// ContentLength and the Content-Length header are the upstream's: a
// caller that passes on fewer bytes (capped, or scrubbed) drops them.
func (s *Service) Open(ctx context.Context, c Call, cred Credential) (*http.Response, error) {
	clean, err := s.Check(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	req, err := s.request(ctx, c, clean, cred)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		err = s.failure(ctx, err, "awaiting the response")
		cancel()
		return nil, err
	}
	resp.Header = s.SafeHeader(resp.Header)
	resp.Body = s.newBody(ctx, cancel, resp)
	resp.Request, resp.Trailer = nil, nil
	return resp, nil
}

// request builds the request of c (whose decoded path Check returned as
// clean) to the base URL, with cred injected and Accept-Encoding identity.
func (s *Service) request(ctx context.Context, c Call, clean string, cred Credential) (*http.Request, error) {
	u := *s.base
	u.Path = strings.TrimSuffix(s.base.Path, "/") + clean
	u.RawPath = s.basePath + c.Path
	q := url.Values{}
	for k, vs := range c.Query {
		q[k] = slices.Clone(vs)
	}
	var body io.Reader
	if len(c.Body) > 0 {
		body = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, s.base.String(), body)
	if err != nil {
		return nil, fmt.Errorf("service %s: method %q cannot be sent", s.name, c.Method)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept-Encoding", "identity")
	if err := s.inject(req.Header, q, cred); err != nil {
		return nil, err
	}
	u.RawQuery = q.Encode()
	req.URL = &u
	return req, nil
}

// inject puts cred where the service's auth kind says, in h or q.
func (s *Service) inject(h http.Header, q url.Values, cred Credential) error {
	v := string(cred.Secret.Reveal())
	if (s.cfg.Auth == "bearer" || s.cfg.Auth == "header") && !validHeaderValue(v) {
		return fmt.Errorf("service %s: its credential holds a control character, which a header cannot carry", s.name)
	}
	switch s.cfg.Auth {
	case "bearer":
		h.Set("Authorization", "Bearer "+v)
	case "basic":
		user := string(cred.User.Reveal())
		if strings.Contains(user, ":") {
			return fmt.Errorf("service %s: the user name of its credential holds a colon, which basic auth cannot send", s.name)
		}
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+v)))
	case "header":
		h.Set(s.cfg.Header, v)
	case "query":
		q.Set(s.cfg.QueryParam, v)
	}
	return nil
}

// checkRedirect is the client's redirect policy. follow_redirects "none":
// the 3xx response is returned as it is. "same-origin": a redirect is
// followed, at most maxRedirects times, when its scheme, host and port are
// the base URL's, it carries no user, its path is under the base URL's
// path and passes Check's path rules, and its method is allowed; the
// credential goes with it (an auth query parameter set again), and no
// Referer the caller did not set. Any other
// redirect is a Failure of cause "redirect", and is not sent.
func (s *Service) checkRedirect(req *http.Request, via []*http.Request) error {
	if s.cfg.FollowRedirects != "same-origin" {
		return http.ErrUseLastResponse
	}
	refused := func(why string) error {
		return &Failure{Cause: CauseRedirect, Msg: fmt.Sprintf("%s redirected %s: not followed", s.addr, why)}
	}
	u := req.URL
	if len(via) > maxRedirects {
		return refused(fmt.Sprintf("more than %d times", maxRedirects))
	}
	if u.Scheme != s.base.Scheme || !strings.EqualFold(u.Hostname(), s.host) || portOf(u) != portOf(s.base) || u.User != nil {
		return refused("to another origin")
	}
	rel, ok := strings.CutPrefix(u.EscapedPath(), s.basePath)
	if !ok || !strings.HasPrefix(rel, "/") {
		return refused("outside the base URL's path")
	}
	if _, err := s.checkPath(rel); err != nil {
		return refused("to a path the service does not allow")
	}
	if !slices.Contains(s.cfg.Methods, req.Method) {
		return refused("to a method the service does not allow")
	}
	if via[0].Header.Get("Referer") == "" {
		req.Header.Del("Referer") // net/http's, the URL before: with auth query, the credential
	}
	if s.cfg.Auth == "query" {
		q := u.Query()
		q.Set(s.cfg.QueryParam, via[0].URL.Query().Get(s.cfg.QueryParam))
		u.RawQuery = q.Encode()
	}
	return nil
}

// SafeHeader returns the headers of h a caller may see: all but
// Set-Cookie, Set-Cookie2, Authorization, WWW-Authenticate, any Proxy-*,
// the hop-by-hop headers (and those Connection names), and the service's
// auth header.
func (s *Service) SafeHeader(h http.Header) http.Header {
	hop := map[string]bool{}
	for _, v := range h.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			hop[http.CanonicalHeaderKey(strings.TrimSpace(f))] = true
		}
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		switch {
		case hop[ck], strings.HasPrefix(ck, "Proxy-"), s.cfg.Auth == "header" && strings.EqualFold(ck, s.cfg.Header):
			continue
		}
		switch ck {
		case "Set-Cookie", "Set-Cookie2", "Authorization", "Www-Authenticate",
			"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
			continue
		}
		out[ck] = slices.Clone(vs)
	}
	return out
}

// Encoded reports whether a response's headers say its body is in a
// content encoding (gzip, deflate, …) though identity was asked for, in
// any of its Content-Encoding values: scrub cannot see into such a body,
// and a caller could decode a credential out of it. The encoding's name
// is never told: an upstream chooses it.
func Encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" && !strings.EqualFold(e, "identity") {
				return true
			}
		}
	}
	return false
}
