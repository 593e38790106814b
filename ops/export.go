package ops

import (
	"context"
	"strings"

	"github.com/arca-secrets/arca/manifest"
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
func (s *Service) Export(ctx context.Context, env, ns string) (ExportResult, error) {
	env, err := s.cfg.ResolveEnv("", env, s.ctxEnv)
	if err != nil {
		return ExportResult{}, err
	}
	if ns != "" && !ref.ValidSegment(ns) {
		return ExportResult{}, Errorf(manifest.BadRequest, "namespace %q %s", ns, ref.SegmentProblem(ns))
	}
	if err := s.canOpen(env); err != nil {
		return ExportResult{}, err
	}
	st, err := s.store(env)
	if err != nil {
		return ExportResult{}, err
	}
	all, err := st.Records(ctx)
	if err != nil {
		return ExportResult{}, asError(err)
	}
	res := ExportResult{Env: env, Records: make([]vault.Record, 0, len(all))}
	for _, r := range all {
		if ns == "" || strings.HasPrefix(r.Name, ns+"/") {
			res.Records = append(res.Records, r)
		}
	}
	if err := s.bulkCheck(env, "get", "env "+env, Records(res.Records)); err != nil {
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
