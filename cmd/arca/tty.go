package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// readHidden prompts on w and reads one line from the terminal on stdin
// without echoing it.
func readHidden(w io.Writer, prompt string) ([]byte, error) {
	fmt.Fprint(w, prompt)
	b, err := term.ReadPassword(int(os.Stdin.Fd()))
	fmt.Fprintln(w)
	if err != nil {
		return nil, ops.Errorf(manifest.OpError, "read value from the terminal: %v", err)
	}
	if len(b) > manifest.MaxValue {
		return nil, ops.Errorf(manifest.BadRequest, "value is larger than %d bytes", manifest.MaxValue)
	}
	return b, nil
}
