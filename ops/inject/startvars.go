package inject

import "strings"

// startupReader says what reads the variable name when a program starts,
// before the program's own code runs, or returns "". No secret is ever
// injected as such a variable: its reader would take the value as code to
// load or run, a place to load code or data from, or options, and print
// it when it is wrong. `LD_PRELOAD=arca://app/db` in arca's environment
// would otherwise have every program the command starts try to preload
// the value, and the loader print it on stderr.
//
// The list (docs/cli.md#names-that-are-never-injected):
//
//   - the dynamic loader: LD_* (glibc, musl), DYLD_* (macOS);
//   - the C library: what glibc itself removes from a setuid program's
//     environment (GCONV_PATH, GLIBC_TUNABLES, MALLOC_*, TMPDIR, …), and
//     the locale (LANG, LANGUAGE, LC_*), whose files it loads and whose
//     bad names shells print;
//   - the shell: the variables sh, bash and zsh read at start (BASH_ENV,
//     ENV, SHELLOPTS, PS4, IFS, …);
//   - PATH, which chooses every program the command runs by name;
//   - the options, startup code and module paths of the common language
//     runtimes: every PYTHON… (Python reads many at start and prints a
//     bad one back, PYTHONWARNINGS and PYTHONIOENCODING among them), Node's
//     NODE_OPTIONS, NODE_PATH, NODE_EXTRA_CA_CERTS (but not NODE_ENV or
//     NODE_AUTH_TOKEN, which hold ordinary values), PERL5OPT, RUBYOPT,
//     JAVA_TOOL_OPTIONS, ….
func startupReader(name string) string {
	for _, p := range [...]struct{ prefix, reader string }{
		{"LD_", "the dynamic loader"}, {"DYLD_", "the dynamic loader"},
		{"MALLOC_", "the C library"}, {"LC_", "the C library"},
	} {
		if strings.HasPrefix(name, p.prefix) {
			return p.reader
		}
	}
	if strings.HasPrefix(name, "PYTHON") && name != "PYTHON" {
		return "a language runtime"
	}
	switch name {
	case "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
		"NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR", "LANG", "LANGUAGE":
		return "the C library"
	case "BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "BASH_XTRACEFD",
		"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH":
		return "the shell"
	case "PATH":
		return "every program that runs another by name"
	case "NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_ICU_DATA", "NODE_REDIRECT_WARNINGS",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH":
		return "a language runtime"
	}
	return ""
}
