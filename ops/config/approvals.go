package config

import (
	"net"
	"strconv"
	"unicode"
)

// Renew rules of [serve.grants] renew (SPEC §14): how a grant that closed
// may be followed by a new one for the same key.
const (
	RenewPDP      = "pdp"      // a later allow carrying arca:ttl or arca:max_uses opens one
	RenewApproval = "approval" // only an approval opens one
)

// GrantsConfig is the [serve.grants] table.
type GrantsConfig struct {
	Renew string `toml:"renew"` // RenewPDP (the default) or RenewApproval
}

// Rule is g's renew rule: RenewPDP unless RenewApproval is set.
func (g GrantsConfig) Rule() string {
	if g.Renew == RenewApproval {
		return RenewApproval
	}
	return RenewPDP
}

// ApprovalsConfig is the [serve.approvals] table: the page on which a
// human decides this session's approvals.
type ApprovalsConfig struct {
	// Listen is where the page listens: a loopback IP literal or
	// localhost, and a port (0: any free one).
	Listen string `toml:"listen"`
	// TokenFile holds the approver's token (a file of mode 0600); when
	// empty, $ARCA_APPROVER_TOKEN does. Relative to the config's
	// directory; a leading ~/ is $HOME.
	TokenFile string `toml:"token_file"`
	// Approver is who a decision made on the page is recorded as.
	Approver string `toml:"approver"`
}

// DefaultApprover is who a page's decision is recorded as when
// [serve.approvals] approver is not set.
const DefaultApprover = "approver"

// maxApprover caps [serve.approvals] approver, as the wire caps an
// approver (manifest.MaxActor).
const maxApprover = 256

// grantsProblem checks [serve.grants] and fills in its default.
func grantsProblem(g *GrantsConfig) string {
	switch g.Renew {
	case "":
		g.Renew = RenewPDP
	case RenewPDP, RenewApproval:
	default:
		return "serve.grants.renew: " + strconv.Quote(g.Renew) + " is neither \"pdp\" nor \"approval\""
	}
	return ""
}

// approvalsProblem checks [serve.approvals] and fills in its defaults.
func (c *Config) approvalsProblem(a *ApprovalsConfig) string {
	if a == nil {
		return ""
	}
	if msg := loopbackListen(a.Listen); msg != "" {
		return "serve.approvals.listen: " + msg
	}
	switch {
	case a.Approver == "":
		a.Approver = DefaultApprover
	case len(a.Approver) > maxApprover:
		return "serve.approvals.approver: longer than " + strconv.Itoa(maxApprover) + " bytes"
	case !printable(a.Approver):
		return "serve.approvals.approver: holds a control character"
	}
	if a.TokenFile != "" {
		p, err := c.expand(a.TokenFile, "serve.approvals.token_file")
		if err != nil {
			return err.Error()
		}
		a.TokenFile = p
	}
	return ""
}

// loopbackListen is why addr is not a loopback host and port, "" when it
// is one.
func loopbackListen(addr string) string {
	if addr == "" {
		return "required (a loopback address and port, e.g. \"127.0.0.1:0\")"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return strconv.Quote(addr) + " is not host:port"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "port " + strconv.Quote(port) + " is not a number from 0 to 65535"
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "host " + strconv.Quote(host) + " is not a loopback address: the page listens on this machine only"
	}
	return ""
}

// printable reports whether s is valid text without control characters.
func printable(s string) bool {
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return false
		}
	}
	return true
}
