package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/arca-secrets/arca/vault/secret"
)

// Meta is a record's metadata as serve reports it.
type Meta struct {
	Ref       string    `json:"ref"`
	Env       string    `json:"env"`
	Version   uint64    `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	RotatedAt time.Time `json:"rotated_at"` // zero until a rotate
}

// Secret is a value, as vault.Secret is: it prints as <redacted>. It comes
// from vault/secret, which imports the standard library only, so the
// client links neither the vaults nor age.
type Secret = secret.Secret

// Got is the result of get. Policy, here and on every result of an op
// that consults the PDP, is the PDP's verdict on the request (with its
// obligations), nil when serve consulted none.
//
// ExpiresAt is the end of the grant the get ran under (zero when there is
// none, or it has no end in time): the value is dropped then. Read it with
// Fresh, which past ExpiresAt wipes it and returns ErrExpired: fetch it
// again.
type Got struct {
	Meta
	Value     SecretValue `json:"value"`
	ExpiresAt time.Time   `json:"expires_at"`
	Policy    *Policy     `json:"-"`
}

// SecretValue is a value read off the wire into a Secret.
type SecretValue struct{ Secret }

// UnmarshalJSON reads the JSON string into the Secret.
func (v *SecretValue) UnmarshalJSON(b []byte) error {
	var s []byte
	if len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && !bytesContainBackslash(b) {
		s = append([]byte(nil), b[1:len(b)-1]...)
	} else {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = []byte(str)
	}
	v.Secret = secret.New(s)
	return nil
}

func bytesContainBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c < 0x20 {
			return true
		}
	}
	return false
}

// Put is the result of put.
type Put struct {
	Meta
	Created bool    `json:"created"`
	Policy  *Policy `json:"-"`
}

// Rotated is the result of rotate.
type Rotated struct {
	Meta
	Policy *Policy `json:"-"`
}

// Removed is the result of rm.
type Removed struct {
	Ref     string  `json:"ref"`
	Env     string  `json:"env"`
	Version uint64  `json:"version"`
	Policy  *Policy `json:"-"`
}

// Listed is the result of list.
type Listed struct {
	Env       string   `json:"env"`
	Records   []Record `json:"records"`
	Truncated bool     `json:"truncated"`
	Omitted   int      `json:"omitted"`
	Policy    *Policy  `json:"-"`
}

// Record is a row of Listed: a record's metadata, never its value, and
// with Request.Deleted, when a soft-deleted name was removed (zero for
// one that is current); its Version is the one Undelete brings back.
type Record struct {
	Meta
	DeletedAt time.Time `json:"deleted_at"`
}

// Checked is the result of check.
type Checked struct {
	Env      string   `json:"env"`
	Vault    string   `json:"vault"`
	Kind     string   `json:"kind"`
	Healthy  bool     `json:"healthy"`
	Records  int      `json:"records"`
	Versions int      `json:"versions"` // earlier versions kept that the check authenticated
	Erased   int      `json:"erased"`   // soft-deleted names past keep_deleted that the check erased
	Problems []string `json:"problems"`
	Info     []string `json:"info"`
	Policy   *Policy  `json:"-"`
}

// Manifest is the result of manifest: what it says of the protocol and the
// process.
type Manifest struct {
	Protocol      string         `json:"protocol"`
	Version       string         `json:"version"`
	Envs          []string       `json:"envs"`
	DefaultEnv    string         `json:"default_env"`
	PDPConfigured bool           `json:"pdp_configured"`
	ErrorCodes    []string       `json:"error_codes"` // every code a response can carry
	Limits        map[string]int `json:"limits"`
	CLIOnly       []string       `json:"cli_only"` // verbs only the single-shot CLI has
	Ops           []struct {
		Name string `json:"name"`
	} `json:"ops"`
	// Capabilities are what the server does beyond the protocol's first
	// release, each with its parameters. A name that is missing means the
	// server predates that capability, never that it is off; nil means it
	// predates them all.
	Capabilities map[string]map[string]any `json:"capabilities"`
}

// Has says whether the server promises capability name.
func (m Manifest) Has(name string) bool {
	_, ok := m.Capabilities[name]
	return ok
}

// Each op has a method of its own, generated from the manifest's op table
// into ops_gen.go (its Request into request_gen.go); a type whose doc says "T is the result of OP." is OP's
// result; for an op with none declared the generator writes <Op>Result
// from its result schema.
//go:generate go run ./internal/gen

// Call sends op with r's fields and decodes its result into a T: any op,
// one with no method of its own too (a newer serve may have more). T is
// the op's result type, or map[string]any; the verdict of a PDP that was
// consulted is on T's Policy when it has one.
func Call[T any](ctx context.Context, c *Client, op string, r Request) (T, error) {
	var v T
	err := call(ctx, c, op, r, &v)
	return v, err
}

// Secrets are the values Resolve got, by the name the caller gave each.
type Secrets map[string]Secret

// Environ returns NAME=value for each secret, sorted by name: for a child's
// environment (exec.Cmd.Env). The values are revealed into strings, which
// cannot be wiped; keep them no longer than the child needs them.
func (s Secrets) Environ() []string {
	out := make([]string, 0, len(s))
	for _, name := range slices.Sorted(maps.Keys(s)) {
		out = append(out, name+"="+string(s[name].Reveal()))
	}
	return out
}

// Resolve gets every ref of refs (name → ref) at once, pipelined: the
// common case of an agent host filling a child's environment. A failure is
// returned naming the name and ref it was for (the one first in name
// order, so the error does not depend on timing), with no values; an
// *Error stays reachable by errors.As.
func (c *Client) Resolve(ctx context.Context, refs map[string]string, base Request) (Secrets, error) {
	out := make(Secrets, len(refs))
	if err := c.resolveInto(ctx, refs, base, out); err != nil {
		return nil, err
	}
	return out, nil
}

// resolveInto is Resolve, into out. On a failure the values already got
// are wiped before it returns: nobody will have them. vault.Secret has no
// wipe of its own; these bytes are the client's, made by its decoder for
// this call and held by nothing else, so they are cleared through Reveal,
// as forget clears a value of a failed call.
func (c *Client) resolveInto(ctx context.Context, refs map[string]string, base Request, out Secrets) error {
	errs := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, ref := range refs {
		wg.Go(func() {
			r := base
			r.Ref = ref
			g, err := c.Get(ctx, r)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[name] = err
				return
			}
			out[name] = g.Value.Secret
		})
	}
	wg.Wait()
	if len(errs) == 0 {
		return nil
	}
	for _, v := range out {
		clear(v.Reveal())
	}
	name := slices.Sorted(maps.Keys(errs))[0]
	return fmt.Errorf("%s (%s): %w", name, refs[name], errs[name])
}
