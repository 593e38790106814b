// Package deploy renders templates into the files programs read, for arca
// deploy: each template is parsed, every secret it names is read through
// ops (validated, routed, held to the guardrails and audited, one get event
// per secret per target, as arca get), and only once every secret of every
// target is in hand are the targets rendered and written, each atomically
// and only when its content changed.
//
// Where bytes go: a value leaves this package only into a target's file
// (mode 0600 unless the target says otherwise) or onto stdout for a target
// whose out is "-". Messages name targets, files, positions and refs, never
// values.
package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/ops/tmpl"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
)

// Source is what deploy needs of an *ops.Service: Get, which audits each
// read, and Withhold, which records that a value read went no further.
type Source interface {
	Get(ctx context.Context, req ops.Request) (ops.GetResult, error)
	Withhold(res ops.GetResult, err *ops.Error) error
}

// Target is one template to render into one file.
type Target struct {
	Name     string      // the [[deploy]] name; "" for a one-off
	Template string      // the template file
	Out      string      // the file to write; "-": stdout
	Mode     fs.FileMode // of Out
	Env      string      // the env its refs resolve in; "": the process context's
}

// Stdout is the Out of a target printed on stdout.
const Stdout = "-"

// Status is what happened to a target.
type Status int

// The statuses.
const (
	Written     Status = iota + 1 // its file was (re)written
	Unchanged                     // its file already held what it renders to
	WouldChange                   // Check: its file would be written
	Printed                       // rendered onto stdout
	Listed                        // DryRun: its refs were listed, nothing read
)

func (s Status) String() string {
	return [...]string{"", "written", "unchanged", "would change", "printed", "listed"}[s]
}

// Result is one target's outcome.
type Result struct {
	Target Target
	Status Status
	Refs   []string // the refs its template names, in order of first appearance
}

// Options choose how Run runs.
type Options struct {
	Check  bool      // render and compare, write nothing
	DryRun bool      // parse and list each target's refs, read nothing
	Stdout io.Writer // where targets with out "-" go
}

// Run deploys targets: parse every template, check that every target can
// be written (see ready), read every secret, render, then write each
// target that changed. A template that does not parse, a target that
// cannot be written, a secret that cannot be read or a value a filter
// cannot encode stops it before any file is written; every value already
// read is then withheld (a second event says it went no further).
func Run(ctx context.Context, src Source, targets []Target, o Options) ([]Result, error) {
	jobs := make([]*job, len(targets))
	for i, t := range targets {
		j, err := load(t)
		if err != nil {
			return nil, err
		}
		jobs[i] = j
	}
	res := make([]Result, len(jobs))
	for i, j := range jobs {
		res[i] = Result{Target: j.t, Status: Listed, Refs: j.refs}
	}
	if o.DryRun {
		return res, nil
	}
	if !o.Check {
		for _, j := range jobs {
			if err := ready(j.t); err != nil {
				return nil, ops.Errorf(manifest.OpError, "%s: %v; nothing was written", label(j.t), err)
			}
		}
	}
	var read []ops.GetResult
	for _, j := range jobs {
		got, err := j.resolve(ctx, src)
		read = append(read, got...)
		if err == nil {
			err = j.render()
		}
		if err != nil {
			return nil, withholdAll(src, read, err)
		}
	}
	return res, write(jobs, res, read, src, o)
}

// job is a target on its way: its parsed template, then its values, then
// what it renders to.
type job struct {
	t      Target
	tpl    *tmpl.Template
	refs   []string
	values map[ref.Ref]vault.Secret
	out    []byte
}

// load reads and parses t's template.
func load(t Target) (*job, error) {
	src, err := fsio.ReadFile(t.Template, tmpl.MaxTemplate)
	if err != nil {
		return nil, ops.Errorf(manifest.BadRequest, "%s: template %v", label(t), err)
	}
	tpl, err := tmpl.Parse(t.Template, src)
	if err != nil {
		return nil, ops.Errorf(manifest.BadRequest, "%s: %v; nothing was written", label(t), err)
	}
	j := &job{t: t, tpl: tpl}
	for _, r := range tpl.Refs() {
		j.refs = append(j.refs, written(r))
	}
	return j, nil
}

// resolve reads every secret j's template names, each audited as a get
// for this target.
func (j *job) resolve(ctx context.Context, src Source) ([]ops.GetResult, error) {
	refs := j.tpl.Refs()
	got := make([]ops.GetResult, 0, len(refs))
	j.values = make(map[ref.Ref]vault.Secret, len(refs))
	purpose := "for " + label(j.t)
	for _, r := range refs {
		res, err := src.Get(ctx, ops.Request{Ref: written(r), Env: j.t.Env, Dest: purpose})
		if err != nil {
			// Where the template names it, as a syntax error says where.
			pos, _ := j.tpl.Where(r)
			return got, ops.Errorf(ops.CodeOf(err), "%s: %s: %v; nothing was written", label(j.t), pos, err)
		}
		got = append(got, res)
		j.values[r] = res.Value
	}
	return got, nil
}

// render renders j into memory.
func (j *job) render() error {
	var b bytes.Buffer
	if err := j.tpl.Render(&b, func(r ref.Ref) vault.Secret { return j.values[r] }); err != nil {
		return ops.Errorf(manifest.BadRequest, "%s: %v; nothing was written", label(j.t), err)
	}
	j.out = b.Bytes()
	return nil
}

// written is r as a template names it: with its env when it pins one.
func written(r ref.Ref) string {
	if r.Env != "" {
		return ref.Scheme + r.Env + "/" + r.Path()
	}
	return r.Canonical()
}

// label names t in messages and events: "target NAME (OUT)", or the out
// alone for a one-off.
func label(t Target) string {
	out := t.Out
	if out == Stdout {
		out = "stdout"
	}
	if t.Name == "" {
		return out
	}
	return fmt.Sprintf("target %s (%s)", t.Name, out)
}

// withholdAll records, for every value read, that it goes no further
// because of err, and returns err (or the failure to record that).
func withholdAll(src Source, read []ops.GetResult, err error) error {
	var e *ops.Error
	if !errors.As(err, &e) {
		e = &ops.Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	for _, r := range read {
		if werr := src.Withhold(r, e); werr != nil {
			return werr
		}
	}
	return e
}
