// Package inject hands secrets to a process, for arca run and arca env: the
// merging of --secret flags and refs found in the environment, their
// resolution through ops, the child's environment, the redactor of its
// output, the formats env prints, and the running of the child, with its
// signals forwarded and its exit mapped to arca's.
//
// Where bytes go: a value leaves this package only into the child's
// environment and into the assignments FormatEnv writes; a redactor passes
// on everything but values. Messages name variables and refs, never values.
package inject

import (
	"bytes"
	"context"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// Injection asks for the secret at Ref to be handed over as the environment
// variable Name (arca run, arca env).
type Injection struct {
	Name string
	Ref  string
}

// Materialized is an injection resolved to its value.
type Materialized struct {
	Name  string
	Value vault.Secret
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
// audited (one get event per secret) exactly as `arca get` would be.
//
// Nothing is read unless every name is valid (ValidVarName) and distinct,
// and every ref is well-formed; an invalid ref is passed to Get alone, so
// that it is audited as a bad request like any other. The first failure ends it and is
// returned with its code, its message prefixed with the variable's name.
// Values that an environment variable cannot hold (a NUL byte) are
// bad_request.
func Materialize(ctx context.Context, src Source, injections []Injection) ([]Materialized, error) {
	seen := make(map[string]bool, len(injections))
	for _, in := range injections {
		if err := validateVarName(in.Name); err != nil {
			return nil, err
		}
		if seen[in.Name] {
			return nil, ops.Errorf(manifest.BadRequest, "secret %s is given twice (one ref per name)", in.Name)
		}
		seen[in.Name] = true
	}
	for _, in := range injections {
		if _, perr := ops.ParseRef(in.Ref); perr != nil {
			_, err := src.Get(ctx, ops.Request{Ref: in.Ref})
			if err == nil {
				err = perr
			}
			return nil, named(in.Name, err)
		}
	}
	out := make([]Materialized, 0, len(injections))
	for _, in := range injections {
		res, err := src.Get(ctx, ops.Request{Ref: in.Ref})
		if err != nil {
			return nil, named(in.Name, err)
		}
		if bytes.IndexByte(res.Value.Reveal(), 0) >= 0 {
			err := ops.Errorf(manifest.BadRequest, "secret %s: the value has a NUL byte, which an environment variable cannot hold", in.Name)
			// The get was audited ok; the trail says the value went no further.
			return nil, src.Withhold(res, err)
		}
		out = append(out, Materialized{Name: in.Name, Value: res.Value})
	}
	return out, nil
}

// named prefixes err's message with the variable it was resolving, keeping
// its code, its verdict and its chain.
func named(name string, err error) error {
	return &ops.Error{Code: ops.CodeOf(err), Msg: "secret " + name + ": " + err.Error(), Err: err, Policy: ops.PolicyOf(err)}
}

// ValidVarName reports whether name can be injected: a POSIX environment
// variable name, [A-Za-z_][A-Za-z0-9_]*, not one of arca's own ARCA_*, and
// not one that the loader, the C library, a shell or a runtime reads when a
// program starts (startupReader).
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
	if who := startupReader(name); who != "" {
		return ops.Errorf(manifest.BadRequest, "secret name %s: %s reads it when a program starts, so no secret is injected as it (use another name)", name, who)
	}
	return nil
}
