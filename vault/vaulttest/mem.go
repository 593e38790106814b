package vaulttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
)

var errTampered = errors.New("a record failed to authenticate")

// MemVault is a vault held in memory whose writes follow vault.Step and
// nothing else: what the suite runs against to show that what it expects
// of history is what Step makes (TestStepStore), and what tests of the ops
// of history run against whatever the state of the real backends. Its
// handles (Open) share its storage; its changes cursor counts the writes
// it committed, so it accounts for every change.
type MemVault struct{ d *memData }

// NewMemVault returns an empty MemVault.
func NewMemVault() *MemVault {
	return &MemVault{d: &memData{chains: map[string]vault.Chain{}, changed: map[string]uint64{}, epoch: 1}}
}

// Open returns a handle on v with the default history, stamping writes
// with now (time.Now when nil).
func (v *MemVault) Open(now func() time.Time) vault.Store {
	if now == nil {
		now = time.Now
	}
	return &memStore{d: v.d, now: now, h: vault.DefaultHistory()}
}

// Corrupt makes v's only name fail to authenticate until it is written
// again (Harness.Corrupt).
func (v *MemVault) Corrupt() error { return v.d.corrupt() }

// memData is one vault's storage, shared by its handles.
type memData struct {
	writer   sync.Mutex // held by a write, or a group from its start to its end
	mu       sync.Mutex // guards what follows
	chains   map[string]vault.Chain
	changed  map[string]uint64 // name → the sequence number of its last change
	seq      uint64
	epoch    int // a rekey starts a new one
	tampered string
}

func (d *memData) corrupt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.chains) != 1 {
		return fmt.Errorf("%d names, want 1", len(d.chains))
	}
	for name := range d.chains {
		d.tampered = name
	}
	return nil
}

// load returns name's chain; the caller holds mu.
func (d *memData) load(name string) (vault.Chain, error) {
	if name == d.tampered {
		return vault.Chain{}, errTampered
	}
	return d.chains[name], nil
}

// store keeps c as name's chain; the caller holds mu.
func (d *memData) store(name string, c vault.Chain) {
	c.Current.Created, c.Current.Touch = false, nil
	c.Previous = slices.Clone(c.Previous)
	for i := range c.Previous {
		c.Previous[i].Created, c.Previous[i].Touch = false, nil
	}
	d.seq++
	d.chains[name], d.changed[name] = c, d.seq
	if name == d.tampered {
		d.tampered = ""
	}
}

type memStore struct {
	d   *memData
	now func() time.Time
	h   vault.History
}

func (s *memStore) Get(_ context.Context, name string) (vault.Record, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	c, err := s.d.load(name)
	if err != nil {
		return vault.Record{}, err
	}
	if !c.HasCurrent {
		return vault.Record{}, vault.ErrNotFound
	}
	return c.Current, nil
}

func (s *memStore) List(ctx context.Context) ([]vault.Meta, error) {
	recs, err := s.Records(ctx)
	var out []vault.Meta
	for _, r := range recs {
		out = append(out, r.Meta)
	}
	return out, err
}

func (s *memStore) Records(ctx context.Context) ([]vault.Record, error) {
	chains, err := s.Chains(ctx)
	out := []vault.Record{}
	for _, c := range chains {
		if c.HasCurrent {
			out = append(out, c.Current)
		}
	}
	return out, err
}

func (s *memStore) Chains(context.Context) ([]vault.Chain, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.d.tampered != "" {
		return nil, errTampered
	}
	var out []vault.Chain
	for _, name := range slices.Sorted(mapKeys(s.d.chains)) {
		out = append(out, s.d.chains[name])
	}
	return out, nil
}

func mapKeys(m map[string]vault.Chain) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (s *memStore) Chain(_ context.Context, name string) (vault.Chain, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	c, err := s.d.load(name)
	if err == nil && !c.Known() {
		err = vault.ErrNotFound
	}
	return c, err
}

func (s *memStore) ListDeleted(ctx context.Context) ([]vault.Meta, error) {
	chains, err := s.Chains(ctx)
	var out []vault.Meta
	for _, c := range chains {
		if c.Deleted() && len(c.Previous) > 0 {
			m := c.Previous[0].Meta
			m.Touch = &vault.Touch{DeletedAt: c.DeletedAt}
			out = append(out, m)
		}
	}
	return out, err
}

// step prepares w against the chain c; the caller holds writer.
func (s *memStore) step(w vault.Write, c vault.Chain) (vault.Chain, vault.Meta, error) {
	if w.Name == s.d.tampered && w.Kind == vault.Remove {
		return vault.Chain{}, vault.Meta{Name: w.Name}, nil
	}
	return vault.Step(w, c, s.h, s.now())
}

func (s *memStore) current(name string) (vault.Chain, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	c, err := s.d.load(name)
	if err == errTampered {
		return vault.Chain{}, nil // only rm reaches step with it
	}
	return c, err
}

func (s *memStore) prepare(w vault.Write, c vault.Chain) (vault.Chain, vault.Meta, error) {
	s.d.mu.Lock()
	tampered := w.Name == s.d.tampered
	s.d.mu.Unlock()
	if tampered && w.Kind != vault.Remove {
		return vault.Chain{}, vault.Meta{}, errTampered
	}
	return s.step(w, c)
}

func (s *memStore) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	_, metas, err := s.applyAll(vault.Writes{w}, func(ms []vault.Meta) error { return approve(ms[0]) })
	if err != nil {
		return vault.Meta{}, err
	}
	return metas[0], nil
}

func (s *memStore) ApplyBatch(_ context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	if err := vault.CheckBatch(b); err != nil {
		return 0, err
	}
	if b.Len() == 0 {
		return 0, nil
	}
	n, _, err := s.applyAll(b, approve)
	return n, err
}

// applyAll prepares every write of b, approves them at once and commits
// them together.
func (s *memStore) applyAll(b vault.Batch, approve vault.ApproveBatch) (int, []vault.Meta, error) {
	s.d.writer.Lock()
	defer s.d.writer.Unlock()
	next := make([]vault.Chain, b.Len())
	metas := make([]vault.Meta, b.Len())
	for i := range b.Len() {
		w := b.At(i)
		c, err := s.current(w.Name)
		if err != nil {
			return 0, nil, err
		}
		if next[i], metas[i], err = s.prepare(w, c); err != nil {
			return 0, nil, err
		}
	}
	if err := approve(metas); err != nil {
		return 0, nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	for i := range b.Len() {
		s.d.store(b.At(i).Name, next[i])
	}
	return b.Len(), metas, nil
}

func (s *memStore) Group(context.Context) (vault.Group, error) {
	s.d.writer.Lock()
	return &memGroup{s: s, pending: map[string]vault.Chain{}}, nil
}

type memGroup struct {
	s       *memStore
	pending map[string]vault.Chain
	order   []string
	ended   bool
}

func (g *memGroup) Add(_ context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	if g.ended {
		return vault.Meta{}, errors.New("the group has ended")
	}
	c, held := g.pending[w.Name]
	if !held {
		var err error
		if c, err = g.s.current(w.Name); err != nil {
			return vault.Meta{}, err
		}
	}
	next, m, err := g.s.prepare(w, c)
	if err != nil {
		return vault.Meta{}, err
	}
	if err := approve(m); err != nil {
		return vault.Meta{}, err
	}
	if !held {
		g.order = append(g.order, w.Name)
	}
	g.pending[w.Name] = next
	return m, nil
}

func (g *memGroup) Commit(context.Context) error {
	if g.ended {
		return errors.New("the group has ended")
	}
	g.s.d.mu.Lock()
	for _, name := range g.order {
		g.s.d.store(name, g.pending[name])
	}
	g.s.d.mu.Unlock()
	g.Abort()
	return nil
}

func (g *memGroup) Abort() {
	if !g.ended {
		g.ended = true
		g.s.d.writer.Unlock()
	}
}

func (s *memStore) Check(context.Context) (vault.Report, error) {
	s.d.writer.Lock()
	defer s.d.writer.Unlock()
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	var rep vault.Report
	for _, name := range slices.Sorted(mapKeys(s.d.chains)) {
		if name == s.d.tampered {
			rep.Records++
			rep.Problems = append(rep.Problems, errTampered.Error())
			continue
		}
		c, erased := vault.Expire(s.d.chains[name], s.h, s.now().UTC())
		if len(erased) > 0 {
			rep.Erased++
			s.d.store(name, c)
		}
		if c.HasCurrent {
			rep.Records++
		}
		rep.Versions += len(c.Previous)
	}
	return rep, nil
}

func (s *memStore) SetHistory(h vault.History) { s.h = h }

func (s *memStore) Changes(_ context.Context, since string, limit int) (vault.Changes, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	cursor := func(seq uint64) string { return fmt.Sprintf("m%d.%d", s.d.epoch, seq) }
	if since == "" {
		return vault.Changes{Cursor: cursor(s.d.seq)}, nil
	}
	e, seqText, ok := strings.Cut(strings.TrimPrefix(since, "m"), ".")
	epoch, eerr := strconv.Atoi(e)
	seq, serr := strconv.ParseUint(seqText, 10, 64)
	switch {
	case !ok || !strings.HasPrefix(since, "m") || eerr != nil || serr != nil || epoch < 1 || epoch > s.d.epoch:
		return vault.Changes{}, vault.ErrBadCursor
	case epoch < s.d.epoch:
		return vault.Changes{Cursor: cursor(s.d.seq), Reset: true}, nil
	case seq > s.d.seq:
		return vault.Changes{}, vault.ErrBadCursor
	}
	var names []string
	for name, at := range s.d.changed {
		if at > seq {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return int(s.d.changed[a]) - int(s.d.changed[b]) })
	out := vault.Changes{Cursor: cursor(s.d.seq)}
	if len(names) > limit {
		names, out.Truncated = names[:limit], true
		out.Cursor = cursor(s.d.changed[names[limit-1]])
	}
	for _, name := range names {
		c := s.d.chains[name]
		st, v := c.State()
		out.Changes = append(out.Changes, vault.Change{Name: name, Version: v, State: st, At: c.ChangedAt})
	}
	return out, nil
}

func (s *memStore) Recipients(context.Context) ([]string, error) { return nil, nil }

func (s *memStore) SetRecipients(context.Context, []string, []age.Recipient) error { return nil }

func (s *memStore) Rekey(context.Context) (int, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	s.d.epoch++
	return len(s.d.chains), nil
}

func (s *memStore) Close() error { return nil }
