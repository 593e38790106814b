package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// serviceDoc is a [services.NAME] table as decoded: its bounds are
// pointers, so that an omitted key (nil) differs from an explicit 0.
type serviceDoc struct {
	Service
	TimeoutMS        *int `toml:"timeout_ms"`
	MaxResponseBytes *int `toml:"max_response_bytes"`
}

// actionDoc is an [actions.NAME] table as decoded.
type actionDoc struct {
	Action
	MaxArgs        *int `toml:"max_args"`
	TimeoutMS      *int `toml:"timeout_ms"`
	MaxOutputBytes *int `toml:"max_output_bytes"`
}

// The values of a service's follow_redirects.
const (
	RedirectsNone       = "none"        // a redirect is returned, not followed (the default)
	RedirectsSameOrigin = "same-origin" // followed within the base URL's origin only
)

// resolveUse fills c.Services and c.Actions from the checked document:
// defaults applied, base URLs normalised, args compiled and tls_ca
// expanded (relative to the config file, ~/ to $HOME). name prefixes
// messages.
func (c *Config) resolveUse(name string, doc *document) error {
	if doc.Services != nil {
		c.Services = make(map[string]Service, len(doc.Services))
	}
	for _, sn := range sortedKeys(doc.Services) {
		s, err := c.resolveService(sn, doc.Services[sn])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		c.Services[sn] = s
	}
	if doc.Actions != nil {
		c.Actions = make(map[string]Action, len(doc.Actions))
	}
	for an, a := range doc.Actions {
		c.Actions[an] = resolveAction(a)
	}
	return nil
}

func (c *Config) resolveService(name string, d serviceDoc) (Service, error) {
	s := d.Service
	s.BaseURL, _ = normalBaseURL(s.BaseURL)
	if s.Methods == nil {
		s.Methods = []string{"GET"}
	}
	s.Methods, s.Paths = slices.Clone(s.Methods), slices.Clone(s.Paths)
	s.TimeoutMS = orDefault(d.TimeoutMS, DefaultServiceTimeoutMS)
	s.MaxResponseBytes = orDefault(d.MaxResponseBytes, DefaultMaxResponseBytes)
	if s.FollowRedirects == "" {
		s.FollowRedirects = RedirectsNone
	}
	if s.TLSCA != "" {
		var err error
		if s.TLSCA, err = c.expand(s.TLSCA, "services."+name+".tls_ca"); err != nil {
			return Service{}, err
		}
	}
	return s, nil
}

func resolveAction(d actionDoc) Action {
	a := d.Action
	a.Argv = slices.Clone(a.Argv)
	if a.Env != nil {
		env := make(map[string]string, len(a.Env))
		for k, v := range a.Env {
			env[k] = v
		}
		a.Env = env
	}
	a.TimeoutMS = orDefault(d.TimeoutMS, DefaultActionTimeoutMS)
	a.MaxOutputBytes = orDefault(d.MaxOutputBytes, DefaultMaxOutputBytes)
	if a.Args != "" {
		a.MaxArgs = orDefault(d.MaxArgs, DefaultMaxArgs)
		a.ArgsRE, _ = compileArgs(a.Args) // checked at load: it compiles
	}
	return a
}

// compileArgs compiles an action's args so that it matches a whole
// argument.
func compileArgs(args string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + args + `)$`)
}

// normalBaseURL is raw with a trailing "/" of its path dropped, and
// what makes it an invalid base_url ("" when valid): an absolute https
// URL (http only to a loopback host) without user, query or fragment,
// whose path is empty or a clean prefix ("/api").
func normalBaseURL(raw string) (string, string) {
	if strings.ContainsAny(raw, "?#") {
		return raw, "must have no query or fragment (the request's path and query are added to it)"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return raw, "must be an absolute URL, as https://api.example.com or https://example.com/api"
	}
	if u.User != nil {
		return raw, "must hold no user or password (the credential is given by credential and auth)"
	}
	if why := hostProblem(u); why != "" {
		return raw, why
	}
	if why := basePathProblem(u); why != "" {
		return raw, why
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), ""
}

// orDefault is *v, or def when v is nil (omitted).
func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}
