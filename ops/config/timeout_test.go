package config

import (
	"strings"
	"testing"
	"time"
)

// One rule for every timeout_ms key: omitted is the default, and an explicit
// value outside 1..MaxTimeoutMS (0 included) is refused, naming the key and
// the range.
func TestTimeoutRule(t *testing.T) {
	keys := []struct {
		key   string // as messages name it
		table string // the table the timeout_ms line is added to, as its last line
		line  string // that line's number
		got   func(*Config) int
	}{
		{"vaults.team.timeout_ms", "[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\n", "5",
			func(c *Config) int { return c.Vaults["team"].TimeoutMS }},
		{"serve.pdp.timeout_ms", "[serve.pdp]\nexec = \"x\"\n", "3",
			func(c *Config) int { return c.Serve.PDP.TimeoutMS }},
	}
	rows := []struct {
		name, value string // value "" omits the key
		want        int    // the value taken, when accepted
		msg         string // else what the message says, KEY and LINE standing for the key and its line
	}{
		{"unset", "", DefaultTimeoutMS, ""},
		{"minimum", "1", 1, ""},
		{"maximum", "600000", 600000, ""},
		{"zero", "0", 0, "arca.toml: KEY is 0, must be 1..600000 (unset: 5000)"},
		{"negative", "-1", 0, "arca.toml: KEY is -1, must be 1..600000 (unset: 5000)"},
		{"too large", "600001", 0, "arca.toml: KEY is 600001, must be 1..600000 (unset: 5000)"},
		{"beyond 64 bits", "99999999999999999999", 0, `arca.toml:LINE: key "KEY": decimal number is too large`},
		{"not an integer", `"5s"`, 0, `arca.toml:LINE: key "KEY": wrong type (got a TOML string)`},
		{"a float", "5000.0", 0, `arca.toml:LINE: key "KEY": wrong type (got a TOML float)`},
	}
	for _, k := range keys {
		for _, r := range rows {
			t.Run(k.key+"/"+r.name, func(t *testing.T) {
				doc := k.table
				if r.value != "" {
					doc += "timeout_ms = " + r.value + "\n"
				}
				c, err := Parse([]byte(doc), "arca.toml", envOf(nil))
				if r.msg == "" {
					if err != nil {
						t.Fatalf("Parse: %v", err)
					}
					if got := k.got(c); got != r.want {
						t.Fatalf("timeout = %d, want %d", got, r.want)
					}
					return
				}
				if err == nil {
					t.Fatalf("Parse accepted it: timeout = %d", k.got(c))
				}
				wantErr(t, err, strings.NewReplacer("KEY", k.key, "LINE", k.line).Replace(r.msg))
			})
		}
	}
}

func TestEtcdTimeout(t *testing.T) {
	for value, want := range map[string]time.Duration{"": 5 * time.Second, "timeout_ms = 1500\n": 1500 * time.Millisecond} {
		c, err := Parse([]byte("[vaults.team]\nkind = \"etcd\"\nendpoints = [\"h:1\"]\nprefix = \"/a/\"\n"+value), "arca.toml", envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Vaults["team"].EtcdTimeout(); got != want {
			t.Errorf("EtcdTimeout() with %q = %v, want %v", value, got, want)
		}
	}
}
