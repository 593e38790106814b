package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// What a verb returns maps to the exit status and what stderr says, here
// and nowhere else.
func TestExit(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		stderr string
	}{
		{"ok", nil, 0, ""},
		{"help", flag.ErrHelp, 0, ""},
		{"usage", usagef("usage: arca get REF"), manifest.ExitUsage, "arca: usage: arca get REF\n"},
		{"op error", opErrorf("write value to stdout: broken pipe"), manifest.ExitOpError, "arca: write value to stdout: broken pipe\n"},
		{"not found", ops.Errorf(manifest.NotFound, "arca://a/b not found"), manifest.ExitNotFound, "arca: arca://a/b not found\n"},
		{"denied, wrapped", fmt.Errorf("x: %w", ops.Errorf(manifest.Denied, "no")), manifest.ExitDenied, "arca: x: no\n"},
		{"pdp unreachable", ops.Errorf(manifest.PDPUnreachable, "pdp"), manifest.ExitOpError, "arca: pdp\n"},
		{"not from ops", errors.New("disk full"), manifest.ExitOpError, "arca: disk full\n"},
		{"two lines", usagef("a\nb\rc"), manifest.ExitUsage, `arca: a\nb\rc` + "\n"},
		{"reported", reported{ops.Errorf(manifest.Denied, "told already")}, manifest.ExitDenied, ""},
		{"child status", exitStatus(77), 77, ""},
		{"status 0", status(0), 0, ""},
		{"status 143", status(143), 143, ""},
	} {
		var stderr bytes.Buffer
		cl := &cli{stderr: &stderr}
		if got := cl.exit(c.err); got != c.status || stderr.String() != c.stderr {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", c.name, got, stderr.String(), c.status, c.stderr)
		}
	}
}
