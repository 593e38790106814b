package vault

import (
	"fmt"
	"slices"
	"time"
)

// Step computes what w makes of c, the chain of w.Name as the vault holds
// it (the zero Chain when it holds nothing of the name), at now under the
// history settings h. It is the rule every backend follows, and returns
// the chain to store and the metadata Approve is shown and the write
// answers: the version it leaves current (for Remove: the one it removed;
// for Destroy: the current one after it, 0 when none), with a Touch when
// the write did more.
//
// The rules: if_version is checked first; a soft delete past
// keep_deleted is erased before anything else; a write makes a new version
// numbered one past the highest the name ever had, pushing the current one
// into the previous versions, and erases the oldest beyond max_versions;
// rm soft-deletes (or erases, when keep_deleted is 0); a restore never
// lowers a version.
func Step(w Write, c Chain, h History, now time.Time) (Chain, Meta, error) {
	if w.IfVersion != nil && *w.IfVersion != c.CurrentVersion() {
		return c, Meta{}, &ConflictError{Current: c.CurrentVersion()}
	}
	now = now.UTC()
	c.Name = w.Name
	if w.Kind == Destroy {
		// A destroy erases what it names even past keep_deleted, where the
		// versions are still stored: what is left then expires with it.
		next, m, err := destroy(c, w.Versions, now)
		if err != nil {
			return c, Meta{}, err
		}
		next, expired := Expire(next, h, now)
		if len(expired) > 0 {
			t := touch(&m)
			t.Erased, t.Gone = sortedVersions(append(t.Erased, expired...)), true
		}
		return next, m, nil
	}
	c, expired := Expire(c, h, now)
	var (
		next Chain
		m    Meta
		err  error
	)
	switch w.Kind {
	case Put:
		next, m = write(c, w.Value, false, h, now)
	case Rotate:
		if !c.HasCurrent {
			return c, Meta{}, ErrNotFound
		}
		next, m = write(c, w.Value, true, h, now)
	case Remove:
		next, m, err = remove(c, h, now)
	case Rollback:
		next, m, err = rollback(c, w.Version, h, now)
	case Undelete:
		if !c.Deleted() || len(c.Previous) == 0 {
			return c, Meta{}, ErrNotFound
		}
		from := c.Previous[0]
		next, m = write(c, from.Value, false, h, now)
		m.Created = false
		touch(&m).From = from.Version
	case Restore:
		next, m, err = restore(c, w, h, now)
	default:
		return c, Meta{}, fmt.Errorf("unknown kind of write %d", w.Kind)
	}
	if err != nil {
		return c, Meta{}, err
	}
	if len(expired) > 0 {
		t := touch(&m)
		t.Erased = sortedVersions(append(t.Erased, expired...))
	}
	return next, m, nil
}

// Expire erases c's versions if it was soft-deleted more than keep_deleted
// before now, and returns the versions it erased. What a write and check
// do first.
func Expire(c Chain, h History, now time.Time) (Chain, []uint64) {
	if !c.Deleted() || now.Sub(c.DeletedAt) < h.KeepDeleted {
		return c, nil
	}
	erased := versionsOf(c.Previous)
	c.Previous, c.DeletedAt, c.ChangedAt = nil, time.Time{}, now
	return c, erased
}

// write makes value the name's new current version.
func write(c Chain, value Secret, rotate bool, h History, now time.Time) (Chain, Meta) {
	rec := Record{Value: value}
	rec.Name, rec.Version, rec.UpdatedAt = c.Name, c.top()+1, now
	switch {
	case c.HasCurrent:
		rec.CreatedAt, rec.RotatedAt = c.Current.CreatedAt, c.Current.RotatedAt
	case len(c.Previous) > 0: // removed, or its current version destroyed
		rec.CreatedAt, rec.RotatedAt = c.Previous[0].CreatedAt, c.Previous[0].RotatedAt
		rec.Created = true
	default:
		rec.CreatedAt, rec.Created = now, true
	}
	if rotate {
		rec.RotatedAt = now
	}
	prev := c.Previous
	if c.HasCurrent {
		prev = append([]Record{c.Current}, prev...)
	}
	out := Chain{Name: c.Name, Current: rec, HasCurrent: true, Highest: rec.Version, ChangedAt: now}
	var erased []uint64
	out.Previous, erased = trim(prev, h.MaxVersions-1)
	m := rec.Meta
	if len(erased) > 0 {
		touch(&m).Erased = erased
	}
	return out, m
}

func remove(c Chain, h History, now time.Time) (Chain, Meta, error) {
	if !c.HasCurrent {
		return c, Meta{}, ErrNotFound
	}
	m := c.Current.Meta
	m.Created = false
	out := Chain{Name: c.Name, Highest: c.top(), ChangedAt: now}
	if h.KeepDeleted > 0 {
		out.Previous = append([]Record{c.Current}, c.Previous...)
		out.DeletedAt = now
		touch(&m).DeletedAt = now
		return out, m, nil
	}
	t := touch(&m)
	t.Erased, t.Gone = sortedVersions(append(versionsOf(c.Previous), c.Current.Version)), true
	return out, m, nil
}

func rollback(c Chain, v uint64, h History, now time.Time) (Chain, Meta, error) {
	if c.Deleted() {
		return c, Meta{}, ErrNotFound // undelete first
	}
	from, ok := c.Find(v)
	if !ok {
		return c, Meta{}, &VersionNotFoundError{Versions: []uint64{v}}
	}
	next, m := write(c, from.Value, false, h, now)
	touch(&m).From = v
	return next, m, nil
}

func destroy(c Chain, versions []uint64, now time.Time) (Chain, Meta, error) {
	kept := versionsOf(c.Previous)
	if c.HasCurrent {
		kept = append(kept, c.Current.Version)
	}
	if len(kept) == 0 {
		return c, Meta{}, ErrNotFound
	}
	if versions == nil {
		versions = kept
	}
	versions = sortedVersions(slices.Clone(versions))
	var missing []uint64
	for _, v := range versions {
		if !slices.Contains(kept, v) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return c, Meta{}, &VersionNotFoundError{Versions: missing}
	}
	out := Chain{Name: c.Name, Highest: c.top(), ChangedAt: now, DeletedAt: c.DeletedAt}
	if c.HasCurrent && !slices.Contains(versions, c.Current.Version) {
		out.Current, out.HasCurrent = c.Current, true
	}
	for _, r := range c.Previous {
		if !slices.Contains(versions, r.Version) {
			out.Previous = append(out.Previous, r)
		}
	}
	if len(out.Previous) == 0 && !out.HasCurrent {
		out.DeletedAt = time.Time{}
	}
	// A destroyed current version leaves the name with no current one and
	// its earlier versions kept as they were (not removed: they never
	// expire), read by get with a version and brought back by rollback.
	m := Meta{Name: c.Name, Version: out.CurrentVersion()}
	t := touch(&m)
	t.Erased, t.Gone = versions, !out.HasCurrent && len(out.Previous) == 0
	return out, m, nil
}

// restore writes the name as a backup holds it, never lowering a version:
// into a name the vault never held it comes whole; into one it holds, the
// backup's versions above the highest the vault had are added, and a
// current value that is not above it is written as a new version.
func restore(c Chain, w Write, h History, now time.Time) (Chain, Meta, error) {
	r, err := restoredChain(w)
	if err != nil {
		return c, Meta{}, err
	}
	if !c.Known() {
		r.Previous, _ = trim(r.Previous, max(h.MaxVersions-1, 0))
		if r.Deleted() && len(r.Previous) == 0 {
			r.DeletedAt = time.Time{}
		}
		m := r.Current.Meta
		if !r.HasCurrent && len(r.Previous) > 0 {
			m = r.Previous[0].Meta
		}
		m.Created = true
		return r, m, nil
	}
	switch {
	case r.HasCurrent && r.Current.Version > c.top():
		var prev []Record // the backup's versions above the vault's, then the vault's own
		for _, p := range r.Previous {
			if p.Version > c.top() {
				prev = append(prev, p)
			}
		}
		if c.HasCurrent {
			prev = append(prev, c.Current)
		}
		prev = append(prev, c.Previous...)
		out := Chain{Name: c.Name, Current: r.Current, HasCurrent: true, Highest: max(r.Highest, r.Current.Version), ChangedAt: now}
		var erased []uint64
		out.Previous, erased = trim(prev, h.MaxVersions-1)
		m := r.Current.Meta
		m.Created = !c.HasCurrent
		if len(erased) > 0 {
			touch(&m).Erased = erased
		}
		return out, m, nil
	case r.HasCurrent:
		next, m := write(c, r.Current.Value, false, h, now)
		return next, m, nil
	}
	m := Meta{Name: c.Name, Version: c.CurrentVersion()}
	if c.HasCurrent {
		m = c.Current.Meta
	}
	return c, m, nil
}

// restoredChain is the chain a Restore write carries, checked: versions
// strictly decreasing from the current one, each with its times.
func restoredChain(w Write) (Chain, error) {
	var r Chain
	if w.Chain != nil {
		r = *w.Chain
		r.Previous = slices.Clone(r.Previous)
	} else {
		r = Chain{Current: Record{Meta: w.Meta, Value: w.Value}, HasCurrent: true}
	}
	r.Name = w.Name
	recs := r.Previous
	if r.HasCurrent {
		recs = append([]Record{r.Current}, recs...)
	}
	for i := range recs {
		if err := checkRestored(recs[i].Meta); err != nil {
			return Chain{}, err
		}
		if i > 0 && recs[i].Version >= recs[i-1].Version {
			return Chain{}, fmt.Errorf("a restored name's versions must be newest first, each once")
		}
		recs[i].Meta = restoredMeta(w.Name, recs[i].Meta)
	}
	if r.HasCurrent {
		r.Current, r.Previous = recs[0], recs[1:]
	} else {
		r.Previous = recs
	}
	if len(recs) > 0 {
		r.Highest = max(r.Highest, recs[0].Version)
	}
	if r.Highest == 0 {
		return Chain{}, fmt.Errorf("a restored name needs a version")
	}
	if !r.DeletedAt.IsZero() {
		r.DeletedAt = r.DeletedAt.UTC()
	}
	if r.ChangedAt.IsZero() {
		r.ChangedAt = time.Now().UTC()
	}
	return r, nil
}

func checkRestored(m Meta) error {
	if m.Version == 0 || m.CreatedAt.IsZero() || m.UpdatedAt.IsZero() {
		return fmt.Errorf("a restored record needs a version and its created and updated times")
	}
	return nil
}

func restoredMeta(name string, m Meta) Meta {
	m.Name, m.Created, m.Touch = name, false, nil
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if !m.RotatedAt.IsZero() {
		m.RotatedAt = m.RotatedAt.UTC()
	}
	return m
}

// top is the highest version number the name has had.
func (c *Chain) top() uint64 {
	top := max(c.Highest, c.CurrentVersion())
	for _, r := range c.Previous {
		top = max(top, r.Version)
	}
	return top
}

// trim keeps the newest n of prev (newest first) and returns the versions
// it dropped, ascending.
func trim(prev []Record, n int) ([]Record, []uint64) {
	if len(prev) <= n {
		return prev, nil
	}
	return prev[:n:n], sortedVersions(versionsOf(prev[n:]))
}

func versionsOf(rs []Record) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

func sortedVersions(vs []uint64) []uint64 {
	slices.Sort(vs)
	return slices.Compact(vs)
}

func touch(m *Meta) *Touch {
	if m.Touch == nil {
		m.Touch = &Touch{}
	}
	return m.Touch
}
