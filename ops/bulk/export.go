package bulk

import (
	"context"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/vault"
)

// ExportResult is every record an export hands out, sorted by name.
type ExportResult struct {
	Env     string
	Records []vault.Record
}

// Export returns the records of env's vault, those of namespace ns only
// when ns is not "", values included, for printing. Every record passes the
// guardrails as a get, and one denied refuses the whole export; each gets
// its own get event, all written (and flushed) before any value is
// returned.
func Export(ctx context.Context, s *ops.Service, env, ns string) (ExportResult, error) {
	env, err := s.ResolveEnv(env)
	if err != nil {
		return ExportResult{}, err
	}
	if ns != "" && !ref.ValidSegment(ns) {
		return ExportResult{}, ops.Errorf(manifest.BadRequest, "namespace %q %s", ns, ref.SegmentProblem(ns))
	}
	st, err := s.Store(env)
	if err != nil {
		return ExportResult{}, err
	}
	all, err := st.Records(ctx)
	if err != nil {
		return ExportResult{}, ops.AsError(err)
	}
	res := ExportResult{Env: env, Records: make([]vault.Record, 0, len(all))}
	for _, r := range all {
		if ns == "" || strings.HasPrefix(r.Name, ns+"/") {
			res.Records = append(res.Records, r)
		}
	}
	if err := bulkCheck(s, env, "get", "env "+env, Records(res.Records)); err != nil {
		return ExportResult{Env: env}, err
	}
	for i, r := range res.Records {
		ch := s.Begin("get", env, r.Name, "")
		write := ch.Record
		if i == len(res.Records)-1 {
			write = ch.Audit
		}
		if err := write(r.Version); err != nil {
			return ExportResult{Env: env}, err
		}
	}
	return res, nil
}
