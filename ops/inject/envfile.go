package inject

import (
	"errors"
	"os"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/secretfile"
	"github.com/arca-secrets/arca/vault/fsio"
)

// MaxEnvFile is the most bytes of an env file read; a larger one is
// refused. A child's whole environment must fit in the few MiB the kernel
// allows for arguments and environment together.
const MaxEnvFile = 1 << 20

// ReadEnvFile reads the env file at path (arca run --env-file): dotenv, by
// the strict parser of ops/secretfile (no expansion, no name set twice),
// read at most MaxEnvFile bytes. Each entry is an injection in file order,
// its Where "PATH: line N": a value that starts with "arca://" (in any
// case, as in arca's environment) is a Ref, any other a Literal.
//
// Every name must be a valid variable name (ValidVarName), and a literal
// cannot hold a NUL byte nor be a 1Password reference (op://…, as an env
// file written for `op run` holds), which would reach the child as text. Every failure is bad_request, naming the file
// and the line, never a value.
func ReadEnvFile(path string) ([]Injection, error) {
	data, err := fsio.ReadFile(path, MaxEnvFile)
	switch {
	case errors.Is(err, fsio.ErrTooLarge):
		return nil, ops.Errorf(manifest.BadRequest, "env file %s is larger than %d bytes (1 MiB)", path, MaxEnvFile)
	case errors.Is(err, os.ErrNotExist):
		return nil, ops.Errorf(manifest.BadRequest, "env file %s does not exist", path)
	case err != nil:
		return nil, ops.Errorf(manifest.BadRequest, "env file: %v", err)
	}
	return ParseEnvFile(path, data)
}

// ParseEnvFile is ReadEnvFile for data read from the file name.
func ParseEnvFile(name string, data []byte) ([]Injection, error) {
	es, _, err := secretfile.Parse(data, "dotenv", secretfile.Options{})
	if err != nil {
		return nil, ops.Errorf(manifest.BadRequest, "%s: %v", name, err)
	}
	out := make([]Injection, 0, len(es))
	for _, e := range es {
		in := envFileEntry(e)
		in.Where = name + ": " + e.Where
		if err := validateVarName(in.Name); err != nil {
			return nil, at(in.Where, err)
		}
		if err := literalProblem(in); err != nil {
			return nil, err
		}
		if in.Literal && isOnePasswordRef(in.Value) {
			return nil, at(in.Where, ops.Errorf(manifest.BadRequest, "%s: %s", in.Name, onePasswordHint))
		}
		out = append(out, in)
	}
	return out, nil
}

// literalProblem refuses a literal that an environment variable cannot
// hold: one with a NUL byte.
func literalProblem(in Injection) error {
	if in.Literal && strings.IndexByte(in.Value, 0) >= 0 {
		return at(in.Where, ops.Errorf(manifest.BadRequest, "%s: the value has a NUL byte, which an environment variable cannot hold", in.Name))
	}
	return nil
}

// envFileEntry is e as an injection: a ref, or a literal.
func envFileEntry(e secretfile.Entry) Injection {
	v := string(e.Value.Reveal())
	if isRef(v) {
		return Injection{Name: e.Name, Ref: v}
	}
	return Injection{Name: e.Name, Literal: true, Value: v}
}

// isRef reports whether v is meant as a ref: it starts with "arca://" in
// any case, so that a mistyped ARCA:// fails loudly instead of reaching a
// child as text.
func isRef(v string) bool {
	return len(v) >= len(ref.Scheme) && strings.EqualFold(v[:len(ref.Scheme)], ref.Scheme)
}

// onePasswordHint is what a 1Password reference (op://…) where a ref of
// arca's was meant is told.
const onePasswordHint = "a 1Password reference (op://): convert it to arca://NS/NAME, its secret migrated into arca (see docs/migrate.md#from-1password)"

// isOnePasswordRef reports whether v is a 1Password secret reference: it
// starts with "op://", in any case.
func isOnePasswordRef(v string) bool {
	return len(v) >= len("op://") && strings.EqualFold(v[:len("op://")], "op://")
}
