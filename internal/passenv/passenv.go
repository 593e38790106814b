// Package passenv says which variables of arca's own environment arca run
// and arca env may pass on as they are (--pass NAME, --pass PREFIX*,
// [run] pass in the config), and picks them out of an environment.
//
// The rules that win over a pass, each named in the refusal:
//
//   - no bare "*": all of arca's environment is never passed (rule: no
//     bare *);
//   - ARCA_* names are arca's own settings and are never passed (rule:
//     ARCA_* names);
//   - a name that the loader, the C library, a shell or a runtime reads
//     when a program starts (internal/startvars) is never passed (rule:
//     start-up variables), unless the allowlist passes it already (PATH,
//     LANG, LC_*, TMPDIR: such a pass changes nothing);
//   - a cloud or CI credential (Cloud) is passed only when named exactly
//     (rule: cloud credentials).
//
// A pattern named exactly after a name the first three rules forbid is
// refused; a PREFIX* pattern whose every match is forbidden is refused;
// any other PREFIX* pattern passes what it matches but the forbidden
// names, which it skips without a word (docs/cli.md says so).
//
// Limits: at most MaxPatterns patterns, each at most MaxPatternLen bytes.
package passenv

import (
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/internal/allowenv"
	"github.com/arca-secrets/arca/internal/startvars"
)

const (
	// MaxPatterns is the most patterns one run takes, flags and config
	// together.
	MaxPatterns = 64
	// MaxPatternLen is the longest pattern, in bytes.
	MaxPatternLen = 128
)

// reserved names arca's own settings.
const reserved = "ARCA_"

// cloudPrefixes and cloudNames are the cloud and CI credentials: the
// names a cloud SDK or CLI, a forge or a CI runner reads a credential (or
// the place of one) from. A PREFIX* pattern never matches them.
func cloudPrefixes() []string {
	return []string{
		"AWS_", "AMAZON_", "GOOGLE_", "GCLOUD_", "CLOUDSDK_", "GCP_", "AZURE_", "ARM_",
		"ALIBABA_CLOUD_", "ALICLOUD_", "OCI_", "IBMCLOUD_", "DIGITALOCEAN_", "HCLOUD_",
		"LINODE_", "SCW_", "CLOUDFLARE_",
	}
}

func cloudNames() []string {
	return []string{
		"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"GITLAB_TOKEN", "CI_JOB_TOKEN", "CI_JOB_JWT", "CI_JOB_JWT_V2", "CI_REGISTRY_PASSWORD",
		"NPM_TOKEN", "NODE_AUTH_TOKEN", "VAULT_TOKEN", "HEROKU_API_KEY", "DOCKER_AUTH_CONFIG",
		"SSH_AUTH_SOCK",
	}
}

// Cloud reports whether name is a cloud or CI credential: every name
// under AWS_, GOOGLE_, AZURE_, … and GITHUB_TOKEN, GITLAB_TOKEN, … (the
// lists above; docs/cli.md shows the same, and a test holds the two
// together).
func Cloud(name string) bool {
	for _, p := range cloudPrefixes() {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, n := range cloudNames() {
		if name == n {
			return true
		}
	}
	return false
}

// Withheld reports whether name is one no child of arca's sees from its
// environment, and no file arca reads expands: arca's own settings
// (ARCA_*, $ARCA_IDENTITY_KEY among them) and the cloud and CI
// credentials (Cloud). A pass names a cloud credential exactly to hand it
// on (Problem); nothing else does.
func Withheld(name string) bool { return strings.HasPrefix(name, reserved) || Cloud(name) }

// CloudList is the cloud and CI credentials as docs/cli.md writes them:
// each prefix as "AWS_*", then each name.
func CloudList() []string {
	var out []string
	for _, p := range cloudPrefixes() {
		out = append(out, p+"*")
	}
	return append(out, cloudNames()...)
}

// Problem says what is wrong with the pattern p, starting with p itself
// (quoted when it is not a plain pattern, by its length when it is too
// long), or returns "".
func Problem(p string) string {
	name, prefix := strings.CutSuffix(p, "*")
	switch {
	case p == "*":
		return "*: a bare * would pass all of arca's environment; name the variables, or a prefix such as CI_* (rule: no bare *)"
	case len(p) > MaxPatternLen:
		return "<" + strconv.Itoa(len(p)) + " bytes>: a pattern is at most " + strconv.Itoa(MaxPatternLen) + " bytes"
	case !validName(name):
		return strconv.QuoteToASCII(p) + ": not a variable name or a prefix of one followed by * (want [A-Za-z_][A-Za-z0-9_]*, optionally ending in *)"
	case strings.HasPrefix(name, reserved):
		return p + ": ARCA_* names are arca's own settings and are never passed (rule: ARCA_* names)"
	case !prefix && allowlisted(name):
		return ""
	case !prefix:
		if who := startvars.Reader(name); who != "" {
			return p + ": " + who + " reads it when a program starts, so it is never passed (rule: start-up variables)"
		}
	}
	if !prefix || allowenv.AllowedPrefix(name) { // LC_* is passed anyway
		return ""
	}
	if who := startvars.Covers(name); who != "" {
		return p + ": every name it matches is one " + who + " reads when a program starts, and none is passed (rule: start-up variables)"
	}
	if coveredByCloud(name) {
		return p + ": every name it matches is a cloud or CI credential, passed only when named exactly (rule: cloud credentials)"
	}
	return ""
}

// validName reports whether name is [A-Za-z_][A-Za-z0-9_]*.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// coveredByCloud reports whether every name starting with prefix is a
// cloud credential.
func coveredByCloud(prefix string) bool {
	for _, p := range cloudPrefixes() {
		if strings.HasPrefix(prefix, p) {
			return true
		}
	}
	return false
}

// allowlisted reports whether the allowlist passes name already.
func allowlisted(name string) bool { return allowenv.Allowed(name) }

// A Var is a variable of arca's environment that a pattern passes.
type Var struct {
	Name, Value string
	Pattern     string // the pattern that passes it, the first that does
}

// Select returns the variables of environ that patterns pass, in
// environ's order: of a name given twice, the first (as getenv reads it);
// entries without "=" are skipped, as are the names the allowlist passes
// already. A PREFIX* pattern skips the names the rules forbid; an exact
// one passes the name it names. Check the patterns with Problem first:
// Select does not refuse.
func Select(environ, patterns []string) []Var {
	if len(patterns) == 0 {
		return nil
	}
	var out []Var
	seen := map[string]bool{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		if allowlisted(name) {
			continue
		}
		if p := match(patterns, name); p != "" {
			out = append(out, Var{Name: name, Value: val, Pattern: p})
		}
	}
	return out
}

// Match returns the first of patterns that would pass the variable name
// were it set, or "".
func Match(patterns []string, name string) string { return match(patterns, name) }

// match returns the first pattern that passes name, or "".
func match(patterns []string, name string) string {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if prefix != "" && strings.HasPrefix(name, prefix) && !forbidden(name) {
				return p
			}
		} else if p == name && Problem(p) == "" {
			return p
		}
	}
	return ""
}

// forbidden reports whether a PREFIX* pattern skips name.
func forbidden(name string) bool {
	return !validName(name) || Withheld(name) || startvars.Reader(name) != ""
}
