package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGrantsAndApprovalsConfig: [serve.grants] renew defaults to "pdp";
// [serve.approvals] needs a loopback listen, defaults its approver and
// resolves its token file against the config's directory; each refusal
// names the key and the problem.
func TestGrantsAndApprovalsConfig(t *testing.T) {
	c, err := Parse([]byte(""), "arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Serve.Grants.Rule() != RenewPDP || c.Serve.Approvals != nil {
		t.Errorf("defaults: renew %q, approvals %+v", c.Serve.Grants.Rule(), c.Serve.Approvals)
	}
	c, err = parse([]byte("[serve.grants]\nrenew = \"approval\"\n[serve.approvals]\nlisten = \"[::1]:8123\"\ntoken_file = \"approver.token\"\n"),
		"arca.toml", "/etc/arca/arca.toml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Serve.Approvals
	if c.Serve.Grants.Rule() != RenewApproval || a.Listen != "[::1]:8123" || a.Approver != DefaultApprover ||
		a.TokenFile != filepath.Join("/etc/arca", "approver.token") {
		t.Errorf("parsed %+v %+v", c.Serve.Grants, a)
	}
	for _, l := range []string{"127.0.0.1:0", "localhost:9000", "127.0.0.2:80"} {
		if _, err := Parse([]byte("[serve.approvals]\nlisten = \""+l+"\"\n"), "arca.toml", envOf(nil)); err != nil {
			t.Errorf("listen %s: %v", l, err)
		}
	}
	for _, c := range []struct{ toml, want string }{
		{"[serve.grants]\nrenew = \"never\"\n", `serve.grants.renew: "never" is neither "pdp" nor "approval"`},
		{"[serve.grants]\nrenaw = \"pdp\"\n", `unknown key "serve.grants.renaw"`},
		{"[serve.approvals]\n", "serve.approvals.listen: required"},
		{"[serve.approvals]\nlisten = \"0.0.0.0:80\"\n", `host "0.0.0.0" is not a loopback address`},
		{"[serve.approvals]\nlisten = \"192.168.1.2:80\"\n", `host "192.168.1.2" is not a loopback address`},
		{"[serve.approvals]\nlisten = \"example.com:80\"\n", `host "example.com" is not a loopback address`},
		{"[serve.approvals]\nlisten = \"127.0.0.1\"\n", `"127.0.0.1" is not host:port`},
		{"[serve.approvals]\nlisten = \"127.0.0.1:99999\"\n", `port "99999" is not a number from 0 to 65535`},
		{"[serve.approvals]\nlisten = \"127.0.0.1:0\"\napprover = \"a\\u001b[2J\"\n", "serve.approvals.approver: holds a control character"},
		{"[serve.approvals]\nlisten = \"127.0.0.1:0\"\napprover = \"" + strings.Repeat("a", 257) + "\"\n", "serve.approvals.approver: longer than 256 bytes"},
		{"[serve.approvals]\nlisten = \"127.0.0.1:0\"\ntoken = \"x\"\n", `unknown key "serve.approvals.token"`},
	} {
		_, err := Parse([]byte(c.toml), "arca.toml", envOf(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.toml, err, c.want)
		}
	}
}
