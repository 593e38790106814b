// Package startvars is the list of environment variables that something
// reads when a program starts, before the program's own code runs: the
// names no secret is ever injected as (arca run, arca env) nor set by an
// action's env (SPEC §13).
package startvars

import "strings"

// Reader says what reads the variable name when a program starts,
// before the program's own code runs, or returns "". No secret is ever
// injected as such a variable: its reader would take the value as code to
// load or run, a place to load code or data from, or options, and print
// it when it is wrong. `LD_PRELOAD=arca://app/db` in arca's environment
// would otherwise have every program the command starts try to preload
// the value, and the loader print it on stderr.
func Reader(name string) string {
	for _, r := range Readers() {
		for _, p := range r.Names {
			if matchName(p, name) {
				return r.Reader
			}
		}
	}
	return ""
}

// matchName reports whether name is the pattern p: a name, or a
// prefix written as the docs write it, "LD_*" (LD_ and every name that
// starts with it) or "PYTHON…" (every longer name that starts with
// PYTHON, but not PYTHON).
func matchName(p, name string) bool {
	if prefix, ok := strings.CutSuffix(p, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	if prefix, ok := strings.CutSuffix(p, "…"); ok {
		return len(name) > len(prefix) && strings.HasPrefix(name, prefix)
	}
	return name == p
}

// A Row is what reads some variables at start, and their names: each a
// name, or a prefix written as the docs write it (matchName).
type Row struct {
	Reader string
	Names  []string
}

// Readers is the list of names that are never injected, by what
// reads them; docs/cli.md#names-that-are-never-injected shows the same
// table, and a test holds the two together.
//
//   - the dynamic loader: LD_* (glibc, musl), DYLD_* (macOS);
//   - the C library: what glibc itself removes from a setuid program's
//     environment (GCONV_PATH, GLIBC_TUNABLES, MALLOC_*, TMPDIR, …), and
//     the locale (LANG, LANGUAGE, LC_*), whose files it loads and whose
//     bad names shells print;
//   - the shell: the variables sh, bash and zsh read at start (BASH_ENV,
//     ENV, SHELLOPTS, PS4, IFS, …);
//   - PATH, which chooses every program the command runs by name;
//   - the options, startup code, configuration and module paths of the
//     common language runtimes: every PYTHON… (Python reads many at start
//     and prints a bad one back, PYTHONWARNINGS and PYTHONIOENCODING among
//     them), Node's NODE_OPTIONS, NODE_PATH, NODE_EXTRA_CA_CERTS (but not
//     NODE_ENV or NODE_AUTH_TOKEN, which hold ordinary values), Perl's
//     PERL5OPT and PERL5DB, Ruby's RUBYOPT, Java's JAVA_TOOL_OPTIONS, Lua's
//     LUA_INIT (and LUA_INIT_5_4, which Lua 5.4 reads first), Erlang's
//     ERL_FLAGS, .NET's DOTNET_STARTUP_HOOKS and CORECLR_PROFILER_PATH
//     (and its _64, _ARM64, … forms), PHP's PHPRC, ….
func Readers() []Row {
	return []Row{
		{"the dynamic loader", []string{"LD_*", "DYLD_*"}},
		{"the C library", []string{
			"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_*",
			"NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR", "LANG", "LANGUAGE", "LC_*",
		}},
		{"the shell", []string{
			"BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "BASH_XTRACEFD",
			"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH",
		}},
		{"every program that runs another by name", []string{"PATH"}},
		{"a language runtime", []string{
			"PYTHON…",
			"NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "NODE_ICU_DATA", "NODE_REDIRECT_WARNINGS", "NODE_PATH",
			"PERL5OPT", "PERL5DB", "PERL5LIB", "PERLLIB",
			"RUBYOPT", "RUBYLIB",
			"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH",
			"LUA_INIT", "LUA_INIT_*", "LUA_PATH", "LUA_PATH_*", "LUA_CPATH", "LUA_CPATH_*",
			"ERL_AFLAGS", "ERL_FLAGS", "ERL_ZFLAGS", "ERL_LIBS",
			"DOTNET_STARTUP_HOOKS", "CORECLR_PROFILER_PATH", "CORECLR_PROFILER_PATH_*",
			"PHPRC", "PHP_INI_SCAN_DIR",
		}},
	}
}

// Covers says what reads every name that starts with prefix when a
// program starts, or returns "": "LD_" and "LD_PRE" are covered by the
// loader's LD_*, "PYTHONX" by PYTHON…, but "PYTHON" (which PYTHON itself
// starts with) and "L" are not.
func Covers(prefix string) string {
	for _, r := range Readers() {
		for _, p := range r.Names {
			if q, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(prefix, q) {
				return r.Reader
			}
			if q, ok := strings.CutSuffix(p, "…"); ok && len(prefix) > len(q) && strings.HasPrefix(prefix, q) {
				return r.Reader
			}
		}
	}
	return ""
}
