package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// maxTerminalLine is the longest line a terminal in canonical mode passes
// on whole; a value that long may have been cut, so it is refused.
const maxTerminalLine = 4095

// readHidden prompts on w and reads one line from the terminal on stdin
// without echoing it. A value that does not fit one terminal line is
// refused, and whatever else was typed or pasted is discarded rather than
// left for the shell to read as commands.
func readHidden(w io.Writer, prompt string) ([]byte, error) {
	fd := int(os.Stdin.Fd())
	fmt.Fprint(w, prompt)
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(w)
	if err != nil {
		return nil, ops.Errorf(manifest.OpError, "read value from the terminal: %v", err)
	}
	if pendingInput(fd) > 0 {
		flushInput(fd)
		return nil, ops.Errorf(manifest.BadRequest, "the value spans more than one line; nothing was stored: pipe it on stdin instead (arca put REF < file)")
	}
	if len(b) >= maxTerminalLine {
		return nil, ops.Errorf(manifest.BadRequest, "a value typed at a terminal must be shorter than %d bytes: pipe it on stdin instead", maxTerminalLine)
	}
	return b, nil
}
