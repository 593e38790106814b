package main

import (
	"flag"
	"slices"
	"strings"

	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/inject"
)

// secretFlags collects repeated NAME=REF flags (--secret, --file). A flag
// without "=" is remembered, not refused in Set: the flag package would
// quote the whole argument in its message, and a value pasted there by
// mistake must not be echoed.
type secretFlags struct {
	list      []inject.Injection
	file      bool // --file: each value is handed over in a file
	malformed bool
}

func (s *secretFlags) String() string { return "" }

func (s *secretFlags) Set(v string) error {
	name, ref, ok := strings.Cut(v, "=")
	if !ok {
		s.malformed = true
		return nil
	}
	s.list = append(s.list, inject.Injection{Name: name, Ref: ref, File: s.file})
	return nil
}

// pathFlags collects a repeated flag's values (--env-file).
type pathFlags []string

func (p *pathFlags) String() string { return "" }

func (p *pathFlags) Set(v string) error {
	*p = append(*p, v)
	return nil
}

// injectFlags are the flags run and env share: what to hand over.
type injectFlags struct {
	secrets  secretFlags
	files    secretFlags
	envFiles pathFlags
	pass     pathFlags
}

// register adds --secret and --env-file to fs, and --file when withFiles
// (run: env prints assignments, and a file would be gone when it exits).
func (f *injectFlags) register(fs *flag.FlagSet, what string, withFiles bool) {
	flags := "--secret"
	if withFiles {
		flags = "--secret and --file"
	}
	fs.Var(&f.secrets, "secret", what+" the variable NAME set to the secret at REF, once per `NAME=REF`")
	fs.Var(&f.envFiles, "env-file", what+" the variables of the dotenv `FILE`, each NAME=REF (a secret) or NAME=value (as written), once per file; "+
		"a later file wins over an earlier one, "+flags+" over every file, and all of them over arca's environment")
	fs.Var(&f.pass, "pass", "pass the variable `NAME` of arca's environment on as it is, or every variable starting with PREFIX for PREFIX*, once per name (never ARCA_*, a start-up variable, or a cloud credential unless named exactly)")
	if withFiles {
		f.files.file = true
		fs.Var(&f.files, "file", "hand over the secret at REF in a file of its own (mode 0600, removed when the command exits), the variable NAME set to its path, once per `NAME=REF`")
	}
}

// check refuses a NAME=REF flag without "=", without echoing it, and a
// --pass that a rule refuses (passenv.Problem), naming the rule.
func (f *injectFlags) check(fs *verbFlags) error {
	switch {
	case f.secrets.malformed:
		return usagef("--secret wants NAME=REF, e.g. --secret DB_PASSWORD=arca://app/db (%s)", fs.usage())
	case f.files.malformed:
		return usagef("--file wants NAME=REF, e.g. --file TLS_KEY=arca://app/tls-key (%s)", fs.usage())
	case len(f.pass) > passenv.MaxPatterns:
		return usagef("--pass is given %d times: at most %d", len(f.pass), passenv.MaxPatterns)
	}
	for _, p := range f.pass {
		if prob := passenv.Problem(p); prob != "" {
			return usagef("--pass %s", prob)
		}
	}
	return nil
}

// passed picks the variables of environ that the config's [run] pass and
// --pass pass on, refusing one that is also injected (inject.Pass).
func (f *injectFlags) passed(cfg *ops.Config, environ []string, injections []inject.Injection) ([]passenv.Var, error) {
	return inject.Pass(environ, append(slices.Clone(cfg.Run.Pass), f.pass...), injections)
}

// injections reads the env files and merges every source with the refs in
// environ, by precedence (inject.Merge).
func (f *injectFlags) injections(environ []string) ([]inject.Injection, error) {
	var files [][]inject.Injection
	for _, p := range f.envFiles {
		in, err := inject.ReadEnvFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, in)
	}
	flags := append(append([]inject.Injection(nil), f.secrets.list...), f.files.list...)
	return inject.Merge(environ, files, flags), nil
}
