package config

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/internal/startvars"
	"github.com/arca-secrets/arca/ops/ref"
)

// actionProblem checks an [actions.NAME] table; the message starts with
// the key, and never holds a value.
func actionProblem(name string, a actionDoc) string {
	if msg := useNameProblem("actions", "action", name); msg != "" {
		return msg
	}
	key := "actions." + name + "."
	for _, msg := range []string{
		argvProblem(a.Argv), argsProblem(a),
		boundProblem("timeout_ms", a.TimeoutMS, MaxActionTimeoutMS, DefaultActionTimeoutMS),
		boundProblem("max_output_bytes", a.MaxOutputBytes, MaxOutputBytesCap, DefaultMaxOutputBytes),
	} {
		if msg != "" {
			return key + msg
		}
	}
	if len(a.Env) > maxActionEnv {
		return fmt.Sprintf("%senv sets more than %d variables", key, maxActionEnv)
	}
	for _, n := range sortedKeys(a.Env) {
		if why := actionEnvNameProblem(n); why != "" {
			return key + "env." + strconv.Quote(truncated(n)) + " " + why
		}
		if _, err := ref.Parse(a.Env[n]); err != nil {
			return key + "env." + n + ": " + err.Error()
		}
	}
	return ""
}

// argvProblem checks an action's command and fixed arguments.
func argvProblem(argv []string) string {
	switch {
	case len(argv) == 0:
		return `argv is required: the command and its fixed arguments (as ["npm", "run", "db:migrate"])`
	case len(argv) > maxArgv:
		return fmt.Sprintf("argv has more than %d entries", maxArgv)
	case argv[0] == "":
		return "argv[0] is empty: it names the command"
	}
	for i, a := range argv {
		switch {
		case strings.IndexByte(a, 0) >= 0:
			return fmt.Sprintf("argv[%d] holds a NUL byte", i)
		case len(a) > maxArgvEntry:
			return fmt.Sprintf("argv[%d] is longer than %d bytes", i, maxArgvEntry)
		}
	}
	return ""
}

// argsProblem checks an action's args (a regexp every extra argument must
// match whole) and max_args.
func argsProblem(a actionDoc) string {
	if a.Args == "" {
		if a.MaxArgs != nil {
			return "max_args is set without args: without args no extra argument is allowed (give args, the regexp each must match)"
		}
		return ""
	}
	if len(a.Args) > maxArgsPattern {
		return "args is longer than " + strconv.Itoa(maxArgsPattern) + " bytes"
	}
	if _, err := compileArgs(a.Args); err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return "args is not a valid regexp: " + se.Code.String()
		}
		return "args is not a valid regexp"
	}
	return boundProblem("max_args", a.MaxArgs, MaxArgsCap, DefaultMaxArgs)
}

// actionEnvNameProblem says, after the name, what makes n a variable an
// action may not set, or returns "".
func actionEnvNameProblem(n string) string {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"
		}
	}
	switch {
	case n == "":
		return "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"
	case strings.HasPrefix(n, "ARCA_"):
		return "is arca's own: ARCA_* names are never set (use another name)"
	}
	if who := startvars.Reader(n); who != "" {
		return "is read by " + who + " when a program starts, so no ref is set as it (use another name)"
	}
	return ""
}
