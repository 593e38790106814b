package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/arca-secrets/arca/internal/termsafe"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// A verb returns nil or an error; exit turns that into the exit status, in
// this one place. An error's status is the one manifest.ExitStatus gives
// its code (an error not from ops is op_error), and its message is printed
// as one line on stderr, except for these:
//
//   - flag.ErrHelp: the verb printed its usage, as asked; status 0.
//   - reported: the error was told already where it belongs (check's
//     report on stdout, serve's stop event): status by its code, nothing
//     printed.
//   - exitStatus: a status passed on as it is (the child's, for run;
//     serve's); nothing printed.
func (c *cli) exit(err error) int {
	var rep reported
	var st exitStatus
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return manifest.ExitOK
	case errors.As(err, &st):
		return int(st)
	case errors.As(err, &rep):
		return manifest.ExitStatus(ops.CodeOf(rep.error))
	}
	c.warnf("%s", err.Error())
	return manifest.ExitStatus(ops.CodeOf(err))
}

// reported is an error already told where it belongs.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// exitStatus is an exit status passed on as it is.
type exitStatus int

func (s exitStatus) Error() string { return "exit status " + strconv.Itoa(int(s)) }

// status returns nil for 0, else st as an exitStatus.
func status(st int) error {
	if st == manifest.ExitOK {
		return nil
	}
	return exitStatus(st)
}

// usagef is a usage error: exit 2, like a bad request.
func usagef(format string, args ...any) error {
	return ops.Errorf(manifest.BadRequest, format, args...)
}

// opErrorf is a failure of arca's own: exit 1.
func opErrorf(format string, args ...any) error {
	return ops.Errorf(manifest.OpError, format, args...)
}

// warnf prints a one-line message on stderr, every character in it that
// is not printable escaped: a newline, and any control character a
// server's answer or a file's name carried in.
func (c *cli) warnf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "arca: %s\n", termsafe.Escape(fmt.Sprintf(format, args...)))
}
