package config

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/arca-secrets/arca/ops/ref"
)

// Deploy is one [[deploy]] block: a template arca deploy renders into a
// file.
type Deploy struct {
	Name     string `toml:"name"`     // names the target on the command line and in messages
	Template string `toml:"template"` // the template file
	Out      string `toml:"out"`      // the file it is rendered into
	Mode     string `toml:"mode"`     // octal permission bits of out, "0600" when omitted
	Env      string `toml:"env"`      // the env its refs resolve in; the process context's when omitted
}

// DefaultDeployMode is the mode of a deploy target that names none.
const DefaultDeployMode fs.FileMode = 0o600

// MaxDeployTargets bounds the [[deploy]] blocks of one config.
const MaxDeployTargets = 1000

// FileMode is the target's mode: Mode parsed, DefaultDeployMode when
// omitted. Validation made sure it parses.
func (d Deploy) FileMode() fs.FileMode {
	m, err := parseMode(d.Mode)
	if err != nil || d.Mode == "" {
		return DefaultDeployMode
	}
	return m
}

// CheckMode reports a Mode that does not parse.
func (d Deploy) CheckMode() error {
	_, err := parseMode(d.Mode)
	return err
}

// parseMode parses an octal mode of permission bits only, "0640".
func parseMode(s string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 || len(s) < 3 || len(s) > 4 {
		return 0, fmt.Errorf("mode %q is not an octal file mode of permission bits, 0000 to 0777 (as \"0640\")", truncated(s))
	}
	return fs.FileMode(n), nil
}

// DeployTargets returns the [[deploy]] blocks with their paths expanded
// like every other path of the config: a leading ~/ is $HOME, a relative
// path is relative to the config file's directory. An out of "-" is
// stdout, and stays "-".
func (c *Config) DeployTargets() ([]Deploy, error) {
	out := make([]Deploy, len(c.Deploy))
	for i, d := range c.Deploy {
		key := "deploy " + d.Name
		var err error
		if d.Template, err = c.expand(d.Template, key+".template"); err != nil {
			return nil, err
		}
		if d.Out == "-" { // stdout, not a file
			out[i] = d
			continue
		}
		if d.Out, err = c.expand(d.Out, key+".out"); err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, sameOut(c.Deploy, out)
}

// sameOut reports two targets that write the same file (after expansion):
// the second would overwrite the first on every run. Stdout ("-") may be
// named by many.
func sameOut(given, expanded []Deploy) error {
	seen := make(map[string]int, len(expanded))
	for i, d := range expanded {
		if given[i].Out == "-" {
			continue
		}
		p := filepath.Clean(d.Out)
		if j, ok := seen[p]; ok {
			return fmt.Errorf("deploy %s: out %s is also deploy %s's: each target writes a file of its own", d.Name, strconv.Quote(p), expanded[j].Name)
		}
		seen[p] = i
	}
	return nil
}

// deployProblem checks the [[deploy]] blocks: each named (a valid
// segment, once), with a template and an out, a mode that parses and an
// env that is configured.
func (c *Config) deployProblem() string {
	if len(c.Deploy) > MaxDeployTargets {
		return fmt.Sprintf("more than %d [[deploy]] blocks", MaxDeployTargets)
	}
	seen := make(map[string]int, len(c.Deploy))
	for i, d := range c.Deploy {
		at := fmt.Sprintf("deploy #%d", i+1)
		switch {
		case d.Name == "":
			return at + ": name is required"
		case ref.SegmentProblem(d.Name) != "":
			return at + ": name " + strconv.Quote(truncated(d.Name)) + " " + ref.SegmentProblem(d.Name)
		case seen[d.Name] > 0:
			return fmt.Sprintf("%s: name %q is also deploy #%d's", at, d.Name, seen[d.Name])
		case d.Template == "":
			return at + " (" + d.Name + "): template is required"
		case d.Out == "":
			return at + " (" + d.Name + "): out is required"
		case d.Env != "" && !c.HasEnv(d.Env):
			return at + " (" + d.Name + "): env " + strconv.Quote(truncated(d.Env)) + " is not a configured env (" + configured(c.sortedEnvNames()) + ")"
		}
		if d.Mode != "" {
			if _, err := parseMode(d.Mode); err != nil {
				return at + " (" + d.Name + "): " + err.Error()
			}
		}
		seen[d.Name] = i + 1
	}
	return ""
}

// truncated is s cut to 64 bytes, for messages.
func truncated(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
