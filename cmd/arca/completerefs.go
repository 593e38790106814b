package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/identity"
)

// Ref completion is a list of the env, asked for at every TAB: it must
// come back at once, print a bounded number of names, and never stop to
// ask anything.
const (
	// completeWithin bounds a ref completion: past it, nothing is printed.
	completeWithin = 2 * time.Second
	// completeMax is the most refs one completion prints.
	completeMax = 200
)

// completeRefs prints the refs of the env (--env and --config given before
// the verb, else the usual defaults) that start with prefix, one a line,
// at most completeMax, in list's order. It is an audited list, as `arca
// list` is, and prints names only, never a value. Nothing is printed, and
// it exits 0, when the vault does not open, when the identity is protected
// and $ARCA_PASSPHRASE_FILE is not set (it never prompts), or when the
// list takes longer than completeWithin.
func (c *cli) completeRefs(ctx context.Context, prefix string) error {
	if len(prefix) > manifest.MaxRef {
		return nil
	}
	c.keys = &identity.Keys{Pass: c.passphraseNoPrompt(), Key: c.getenv(identity.KeyEnv)}
	ctx, cancel := context.WithTimeout(ctx, completeWithin)
	defer cancel()
	got := make(chan []string, 1)
	go func() { got <- c.listRefs(ctx, prefix) }()
	select {
	case refs := <-got:
		for _, r := range refs {
			fmt.Fprintln(c.stdout, r)
		}
	case <-ctx.Done():
	}
	return nil
}

// listRefs is the refs of the env that start with prefix, at most
// completeMax; none when anything fails. A prefix whose first segment
// names a configured env (arca://prod/…) completes that env's refs too,
// pinned to it.
func (c *cli) listRefs(ctx context.Context, prefix string) []string {
	svc, done, err := c.service(c.global)
	if err != nil {
		return nil
	}
	defer done()
	if !strings.HasPrefix("arca://", prefix) && !strings.HasPrefix(prefix, "arca://") {
		return nil // no ref starts so
	}
	rest := strings.TrimPrefix(prefix, "arca://")
	if len(prefix) < len("arca://") {
		rest = ""
	}
	refs := pickRefs(ctx, svc, "", "arca://", rest)
	if env, pinned, ok := strings.Cut(rest, "/"); ok && slices.Contains(svc.Config().EnvNames(), env) {
		refs = append(refs, pickRefs(ctx, svc, env, "arca://"+env+"/", pinned)...)
	}
	return refs[:min(len(refs), completeMax)]
}

// pickRefs is the refs of env ("": the process's) whose ns/name starts
// with rest, written after scheme. The vault picks the names, so that a
// name past the most one list holds completes too: rest "pay/lo" is the
// glob pay/lo*.
func pickRefs(ctx context.Context, svc *ops.Service, env, scheme, rest string) []string {
	if strings.ContainsAny(rest, "*?[]\\") {
		return nil // no ref holds these
	}
	res, err := svc.List(ctx, ops.Request{Env: env, Page: &ops.ListPage{Match: rest + "*", Limit: completeMax}})
	if err != nil {
		return nil
	}
	refs := make([]string, 0, len(res.Records))
	for _, r := range res.Records {
		refs = append(refs, scheme+strings.TrimPrefix(r.Ref, "arca://"))
	}
	return refs
}

// passphraseNoPrompt gives a protected identity's passphrase from
// $ARCA_PASSPHRASE_FILE only: a completion never asks on the terminal.
func (c *cli) passphraseNoPrompt() identity.Passphrase {
	return func(string) (string, error) {
		if f := c.getenv(identity.PassphraseFileEnv); f != "" {
			return identity.ReadPassphraseFile(f)
		}
		return "", errors.New("the identity is protected and $" + identity.PassphraseFileEnv + " is not set: a completion never asks")
	}
}
