package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// maxTerminalLine is the longest line a terminal in canonical mode passes
// on whole; a value that long may have been cut, so it is refused.
const maxTerminalLine = 4095

// readHidden prompts on w and reads one line from the terminal on stdin
// without echoing it. End of input (Ctrl-D, on an empty line or after some
// characters) stores nothing, whatever is typed next. A value that does not
// fit one terminal line is refused, and whatever else was typed or pasted
// is discarded rather than left for the shell to read as commands.
func readHidden(w io.Writer, prompt string) ([]byte, error) {
	fd := int(os.Stdin.Fd())
	restore, err := echoOff(fd)
	if err != nil {
		return nil, ops.Errorf(manifest.OpError, "read value from the terminal: %v", err)
	}
	fmt.Fprint(w, prompt)
	line, err := readLine(fd)
	more := err == nil && pendingInput(fd) > 0
	if err != nil || more {
		flushInput(fd) // before the echo is back: nothing of it is shown
	}
	restore()
	fmt.Fprintln(w)
	switch {
	case err != nil:
		return nil, err
	case more:
		return nil, ops.Errorf(manifest.BadRequest, "the value spans more than one line; nothing was stored: pipe it on stdin instead (arca put REF < file)")
	}
	if len(line) >= maxTerminalLine {
		return nil, ops.Errorf(manifest.BadRequest, "a value typed at a terminal must be shorter than %d bytes: pipe it on stdin instead", maxTerminalLine)
	}
	return line, nil
}

// echoOff turns off the echo of the terminal on fd, keeping it line by line
// (and Ctrl-C a signal), and returns what puts it back.
func echoOff(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil, err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, setTermios, &quiet); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, setTermios, old) }, nil
}

// errEndOfInput is end of input at the prompt.
func errEndOfInput() error {
	return ops.Errorf(manifest.BadRequest, "end of input at the prompt: nothing was stored")
}

// readLine reads one line from the terminal on fd, in canonical mode, and
// returns it without its newline; a backspace (^H, which the terminal
// passes on) erases the byte before it. The terminal hands over at most one
// line per read: a read that ends without a newline ended at Ctrl-D, and an
// empty one is Ctrl-D on an empty line. Both are end of input.
func readLine(fd int) ([]byte, error) {
	buf := make([]byte, maxTerminalLine+2)
	n, err := readRetry(fd, buf)
	switch {
	case err != nil:
		return nil, ops.Errorf(manifest.OpError, "read value from the terminal: %v", err)
	case n == 0 || buf[n-1] != '\n':
		return nil, errEndOfInput()
	}
	defer clear(buf)
	line := make([]byte, 0, n-1)
	for _, b := range buf[:n-1] {
		if b == '\b' {
			if len(line) > 0 {
				line = line[:len(line)-1]
			}
			continue
		}
		line = append(line, b)
	}
	return line, nil
}

// readRetry is read(2) on fd, retried when a signal interrupted it.
func readRetry(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}
