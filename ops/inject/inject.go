// Package inject hands secrets to a process, for arca run and arca env: the
// merging of --secret and --file flags, env files (--env-file) and refs
// found in the environment, their resolution through ops, the child's
// environment and its files, the masking of its output (internal/scrub),
// the formats env prints, and the running of the child, with its signals
// forwarded and its exit mapped to arca's.
//
// Where bytes go: a value leaves this package only into the child's
// environment, into the files of --file (in a directory of the user's
// alone, removed when the child exits) and into the assignments FormatEnv
// writes; a masked child's output passes on everything but values.
// Messages name variables, refs, files and lines, never values.
package inject

import (
	"bytes"
	"context"
	"strings"

	"github.com/arca-secrets/arca/internal/startvars"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// Injection asks for a variable of the child: the secret at Ref handed
// over as the environment variable Name (arca run, arca env), or in a file
// whose path Name is set to (File), or, from an env file, a Literal value.
type Injection struct {
	Name string
	Ref  string
	// File hands the value over in a file (arca run --file): the variable
	// Name is set to the file's path. A file can hold a NUL byte.
	File bool
	// Literal marks an env file's NAME=value whose value is not a ref:
	// Value is handed over as written, nothing is read or audited, and
	// masking leaves it alone.
	Literal bool
	Value   string
	// Where says where the injection was asked for, for messages: "" for
	// a flag or arca's environment, "FILE: line N" for an env file.
	Where string
}

// Materialized is an injection resolved to its value.
type Materialized struct {
	Name  string
	Value vault.Secret
	// File: the value goes into a file, and the variable Name holds its
	// path (Run writes it).
	File bool
	// Literal: the value is no secret (an env file's value as written):
	// masking leaves it alone.
	Literal bool
}

// reservedPrefix names arca's own settings (ARCA_CONFIG, ARCA_ENV, …). No
// injection may set one: a child never sees ARCA_*, and an `eval` of arca
// env must not be able to redirect the next arca's config.
const reservedPrefix = "ARCA_"

// Source is what Materialize needs of an *ops.Service: Get, which
// validates, routes, holds to the guardrails and audits each read as
// arca get does, and Withhold, which records that a value read goes no
// further.
type Source interface {
	Get(ctx context.Context, req ops.Request) (ops.GetResult, error)
	Withhold(res ops.GetResult, err *ops.Error) error
}

// Materialize resolves every injection through src's Get, in order, in
// its env context: each is validated, routed, held to the guardrails and
// audited (one get event per secret, its message saying where the value
// goes: "to NAME", "to a file for NAME") exactly as `arca get` would be.
// Literals are taken as they are, neither read nor audited.
//
// Nothing is read unless every name is valid (ValidVarName) and distinct,
// and every ref is well-formed; an invalid ref is passed to Get alone, so
// that it is audited as a bad request like any other. The first failure
// ends it and is returned with its code, its message prefixed with the
// variable's name (and with its Where). Values that an environment
// variable cannot hold (a NUL byte) are bad_request, unless they go into a
// file.
func Materialize(ctx context.Context, src Source, injections []Injection) ([]Materialized, error) {
	if err := checkNames(injections); err != nil {
		return nil, err
	}
	for _, in := range injections {
		if err := precheck(ctx, src, in); err != nil {
			return nil, err
		}
	}
	out := make([]Materialized, 0, len(injections))
	for _, in := range injections {
		m, err := materialize(ctx, src, in)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// checkNames refuses an invalid name, or one given twice.
func checkNames(injections []Injection) error {
	seen := make(map[string]bool, len(injections))
	for _, in := range injections {
		if err := validateVarName(in.Name); err != nil {
			return at(in.Where, err)
		}
		if seen[in.Name] {
			return at(in.Where, ops.Errorf(manifest.BadRequest, "secret %s is given twice (one ref per name)", in.Name))
		}
		seen[in.Name] = true
	}
	return nil
}

// precheck refuses what can be refused of in before any secret is read: a
// malformed ref (passed to Get alone first, so that the bad request is
// audited), a literal with a NUL byte.
func precheck(ctx context.Context, src Source, in Injection) error {
	if in.Literal {
		return literalProblem(in)
	}
	if _, perr := ops.ParseRef(in.Ref); perr != nil {
		_, err := src.Get(ctx, ops.Request{Ref: in.Ref})
		if err == nil {
			err = perr
		}
		if isOnePasswordRef(in.Ref) {
			err = &ops.Error{Code: ops.CodeOf(err), Msg: err.Error() + ": " + onePasswordHint, Err: err}
		}
		return named(in, err)
	}
	return nil
}

// materialize reads the one injection in (or takes its literal).
func materialize(ctx context.Context, src Source, in Injection) (Materialized, error) {
	if in.Literal {
		return Materialized{Name: in.Name, Value: vault.NewSecret([]byte(in.Value)), Literal: true}, nil
	}
	res, err := src.Get(ctx, ops.Request{Ref: in.Ref, Dest: dest(in)})
	if err != nil {
		return Materialized{}, named(in, err)
	}
	if !in.File && bytes.IndexByte(res.Value.Reveal(), 0) >= 0 {
		err := ops.Errorf(manifest.BadRequest, "%ssecret %s: the value has a NUL byte, which an environment variable cannot hold (arca run --file can hand it over)", where(in.Where), in.Name)
		// The get was audited ok; the trail says the value went no further.
		return Materialized{}, src.Withhold(res, err)
	}
	return Materialized{Name: in.Name, Value: res.Value, File: in.File}, nil
}

// dest says where in's value goes, for the message of its audit event:
// "to NAME" for a variable, "to a file for NAME" for a file.
func dest(in Injection) string {
	if in.File {
		return "to a file for " + in.Name
	}
	return "to " + in.Name
}

// named prefixes err's message with the variable it was resolving (and
// where it was asked for), keeping its code, its verdict and its chain.
func named(in Injection, err error) error {
	return &ops.Error{Code: ops.CodeOf(err), Msg: where(in.Where) + "secret " + in.Name + ": " + err.Error(), Err: err, Policy: ops.PolicyOf(err)}
}

// at prefixes err's message with w, a Where, keeping its code.
func at(w string, err error) error {
	if w == "" {
		return err
	}
	return &ops.Error{Code: ops.CodeOf(err), Msg: where(w) + err.Error(), Err: err}
}

// where is w ready to start a message: "FILE: line N: ", or "".
func where(w string) string {
	if w == "" {
		return ""
	}
	return w + ": "
}

// ValidVarName reports whether name can be injected: a POSIX environment
// variable name, [A-Za-z_][A-Za-z0-9_]*, not one of arca's own ARCA_*, and
// not one that the loader, the C library, a shell or a runtime reads when a
// program starts (startvars.Reader).
func ValidVarName(name string) bool { return validateVarName(name) == nil }

func validateVarName(name string) error {
	if name == "" {
		return ops.Errorf(manifest.BadRequest, "secret name is empty (want NAME=REF)")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return ops.Errorf(manifest.BadRequest, "secret name %q is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", name)
	}
	if strings.HasPrefix(name, reservedPrefix) {
		return ops.Errorf(manifest.BadRequest, "secret name %s: ARCA_* names are arca's own settings and are never injected", name)
	}
	if who := startvars.Reader(name); who != "" {
		return ops.Errorf(manifest.BadRequest, "secret name %s: %s reads it when a program starts, so no secret is injected as it (use another name)", name, who)
	}
	return nil
}
