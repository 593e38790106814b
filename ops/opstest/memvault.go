package opstest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

// Mem is a vault held in memory that follows vault.Step, the rule every
// backend follows: what a test of the ops of versions and history runs
// against, whatever the state of the real backends. Its changes cursor
// is the count of writes it committed; it accounts for every change.
type Mem struct {
	mu      sync.Mutex
	now     func() time.Time
	h       vault.History
	chains  map[string]vault.Chain
	gen     uint64            // writes committed
	changed map[string]uint64 // the gen at which each name last changed
}

// NewMem returns an empty Mem with the default history, stamping writes
// with now (time.Now when nil).
func NewMem(now func() time.Time) *Mem {
	if now == nil {
		now = time.Now
	}
	return &Mem{now: now, h: vault.DefaultHistory(), chains: map[string]vault.Chain{}, changed: map[string]uint64{}}
}

// MemBackends opens one Mem per vault name, with the history its config
// gives, as backend.Kinds opens the real ones.
type MemBackends struct {
	mu     sync.Mutex
	Vaults map[string]*Mem
}

// Open implements ops.Backends.
func (b *MemBackends) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Vaults == nil {
		b.Vaults = map[string]*Mem{}
	}
	m, ok := b.Vaults[name]
	if !ok {
		m = NewMem(now)
		b.Vaults[name] = m
	}
	m.SetHistory(vc.HistorySettings())
	return m, nil
}

// Create implements ops.Backends: a Mem needs no creating.
func (b *MemBackends) Create(context.Context, string, ops.VaultConfig, []age.Recipient) (bool, error) {
	return true, nil
}

// Problems implements ops.Backends.
func (b *MemBackends) Problems(ops.VaultConfig) []string { return nil }

// SetHistory implements vault.Store.
func (m *Mem) SetHistory(h vault.History) { m.mu.Lock(); m.h = h; m.mu.Unlock() }

// Get implements vault.Store.
func (m *Mem) Get(_ context.Context, name string) (vault.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.chains[name]
	if !c.HasCurrent {
		return vault.Record{}, vault.ErrNotFound
	}
	return c.Current, nil
}

// List implements vault.Store.
func (m *Mem) List(context.Context) ([]vault.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []vault.Meta
	for _, n := range m.names() {
		if c := m.chains[n]; c.HasCurrent {
			out = append(out, c.Current.Meta)
		}
	}
	return out, nil
}

// Records implements vault.Store.
func (m *Mem) Records(context.Context) ([]vault.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []vault.Record
	for _, n := range m.names() {
		if c := m.chains[n]; c.HasCurrent {
			out = append(out, c.Current)
		}
	}
	return out, nil
}

func (m *Mem) names() []string {
	var ns []string
	for n := range m.chains {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// Apply implements vault.Store.
func (m *Mem) Apply(ctx context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	g, _ := m.Group(ctx)
	meta, err := g.Add(ctx, w, approve)
	if err != nil {
		g.Abort()
		return vault.Meta{}, err
	}
	return meta, g.Commit(ctx)
}

// ApplyBatch implements vault.Store: one unit.
func (m *Mem) ApplyBatch(ctx context.Context, b vault.Batch, approve vault.ApproveBatch) (int, error) {
	g, _ := m.Group(ctx)
	for i := range b.Len() {
		if _, err := g.Add(ctx, b.At(i), func(meta vault.Meta) error { return approve([]vault.Meta{meta}) }); err != nil {
			g.Abort()
			return 0, err
		}
	}
	return b.Len(), g.Commit(ctx)
}

// Group implements vault.Store: its writes are prepared against the
// chains as the group's earlier writes leave them, and committed at once.
func (m *Mem) Group(context.Context) (vault.Group, error) {
	return &memGroup{m: m, next: map[string]vault.Chain{}}, nil
}

type memGroup struct {
	m     *Mem
	next  map[string]vault.Chain
	order []string
}

func (g *memGroup) Add(_ context.Context, w vault.Write, approve vault.Approve) (vault.Meta, error) {
	g.m.mu.Lock()
	c, ok := g.next[w.Name]
	if !ok {
		c = g.m.chains[w.Name]
	}
	h, now := g.m.h, g.m.now()
	g.m.mu.Unlock()
	next, meta, err := vault.Step(w, c, h, now)
	if err != nil {
		return vault.Meta{}, err
	}
	if err := approve(meta); err != nil {
		return vault.Meta{}, err
	}
	g.next[w.Name] = next
	g.order = append(g.order, w.Name)
	return meta, nil
}

func (g *memGroup) Commit(context.Context) error {
	g.m.mu.Lock()
	defer g.m.mu.Unlock()
	for _, n := range g.order {
		g.m.gen++
		g.m.chains[n], g.m.changed[n] = g.next[n], g.m.gen
	}
	g.next, g.order = nil, nil
	return nil
}

func (g *memGroup) Abort() { g.next, g.order = nil, nil }

// Check implements vault.Store: it erases what keep_deleted expired.
func (m *Mem) Check(context.Context) (vault.Report, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rep vault.Report
	for n, c := range m.chains {
		c, erased := vault.Expire(c, m.h, m.now())
		if len(erased) > 0 {
			rep.Erased++
			m.gen++
			m.chains[n], m.changed[n] = c, m.gen
		}
		if c.HasCurrent {
			rep.Records++
		}
		rep.Versions += len(c.Previous)
	}
	return rep, nil
}

// Chain implements vault.Store.
func (m *Mem) Chain(_ context.Context, name string) (vault.Chain, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.chains[name]
	if !ok || !c.Known() {
		return vault.Chain{}, vault.ErrNotFound
	}
	c.Previous = slices.Clone(c.Previous)
	return c, nil
}

// ListDeleted implements vault.Store.
func (m *Mem) ListDeleted(context.Context) ([]vault.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []vault.Meta
	for _, n := range m.names() {
		if c := m.chains[n]; c.Deleted() && len(c.Previous) > 0 {
			meta := c.Previous[0].Meta
			meta.Touch = &vault.Touch{DeletedAt: c.DeletedAt}
			out = append(out, meta)
		}
	}
	return out, nil
}

// Chains implements vault.Store.
func (m *Mem) Chains(context.Context) ([]vault.Chain, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []vault.Chain
	for _, n := range m.names() {
		out = append(out, m.chains[n])
	}
	return out, nil
}

// Changes implements vault.Store: the cursor is "m" and the count of
// writes committed.
func (m *Mem) Changes(_ context.Context, since string, limit int) (vault.Changes, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := vault.Changes{Cursor: "m" + strconv.FormatUint(m.gen, 10)}
	if since == "" {
		return out, nil
	}
	n, err := strconv.ParseUint(since[min(1, len(since)):], 10, 64)
	if since[0] != 'm' || err != nil || n > m.gen {
		return vault.Changes{}, vault.ErrBadCursor
	}
	var names []string
	for name, g := range m.changed {
		if g > n {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return int(m.changed[a]) - int(m.changed[b]) })
	for _, name := range names {
		if len(out.Changes) == limit {
			out.Truncated = true
			out.Cursor = "m" + strconv.FormatUint(m.changed[name]-1, 10)
			break
		}
		c := m.chains[name]
		st, v := c.State()
		out.Changes = append(out.Changes, vault.Change{Name: name, Version: v, State: st, At: c.ChangedAt})
	}
	return out, nil
}

// Close implements vault.Store.
func (m *Mem) Close() error { return nil }

var _ vault.Store = (*Mem)(nil)
