package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// Page sizes: what one answer holds at most.
const (
	DefaultRows = 200
	MaxRows     = 1000
	Buckets     = 48 // bars of the events-over-time chart
)

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fail answers err, an ops error (whose message never holds a value), with
// the status its code maps to.
func fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch ops.CodeOf(err) {
	case manifest.BadRequest:
		status = http.StatusBadRequest
	case manifest.NotFound:
		status = http.StatusNotFound
	case manifest.Denied, manifest.PDPUnreachable:
		status = http.StatusForbidden
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": msg})
}

func (s *Server) envs(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"envs": s.o.Envs})
}

// record is a row of the records table: metadata, never a value.
type record struct {
	Ref       string `json:"ref"`
	Version   uint64 `json:"version"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	RotatedAt string `json:"rotated_at,omitempty"`
	// SinceRotation is the seconds since the last rotate, or since the
	// record was created when it was never rotated.
	SinceRotation int64 `json:"since_rotation_s"`
}

// records is a page of an env's records (ops list: audited, at most
// manifest.MaxListRows), offset and limit in the query.
func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, ok := page(w, q.Get("offset"), q.Get("limit"))
	if !ok {
		return
	}
	res, err := s.o.Vaults.List(r.Context(), ops.Request{Op: "list", Env: q.Get("env")})
	if err != nil {
		fail(w, err)
		return
	}
	now := s.o.Now()
	rows := make([]record, 0, limit)
	for _, rec := range res.Records[min(offset, len(res.Records)):min(offset+limit, len(res.Records))] {
		row := record{Ref: rec.Ref, Version: rec.Version, CreatedAt: rec.CreatedAt.String(), UpdatedAt: rec.UpdatedAt.String()}
		rotated := rec.CreatedAt.Time
		if !rec.RotatedAt.IsZero() {
			row.RotatedAt, rotated = rec.RotatedAt.String(), rec.RotatedAt.Time
		}
		row.SinceRotation = int64(now.Sub(rotated) / time.Second)
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"env": res.Env, "total": len(res.Records) + res.Omitted, "listed": len(res.Records),
		"offset": offset, "records": rows, "truncated": res.Truncated,
	})
}

// page reads offset and limit, answering 400 when they are not numbers in
// range.
func page(w http.ResponseWriter, off, lim string) (offset, limit int, ok bool) {
	offset, limit = 0, DefaultRows
	var err error
	if off != "" {
		if offset, err = strconv.Atoi(off); err != nil || offset < 0 {
			badRequest(w, "offset must be a number, 0 or more")
			return 0, 0, false
		}
	}
	if lim != "" {
		if limit, err = strconv.Atoi(lim); err != nil || limit < 1 || limit > MaxRows {
			badRequest(w, "limit must be a number from 1 to "+strconv.Itoa(MaxRows))
			return 0, 0, false
		}
	}
	return offset, limit, true
}

// health is an env's check (audited) and, for a shared vault, who can open it.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	env := r.URL.Query().Get("env")
	res, err := s.o.Vaults.Check(r.Context(), ops.Request{Op: "check", Env: env})
	if err != nil {
		fail(w, err)
		return
	}
	out := map[string]any{"env": res.Env, "vault": res.Vault, "kind": res.Kind, "healthy": res.Healthy,
		"records": res.Records, "problems": res.Problems, "info": res.Info}
	if res.Kind == "etcd" {
		team, err := s.o.Vaults.Recipients(r.Context(), res.Env)
		if err != nil {
			fail(w, err)
			return
		}
		out["recipients"] = team.Recipients
	}
	writeJSON(w, http.StatusOK, out)
}

// event is a row of the trail table.
type event struct {
	TS      string        `json:"ts"`
	Seq     uint64        `json:"seq"`
	Event   string        `json:"event"`
	Op      string        `json:"op,omitempty"`
	Outcome string        `json:"outcome,omitempty"`
	Env     string        `json:"env,omitempty"`
	Ref     string        `json:"ref,omitempty"`
	Actor   string        `json:"actor,omitempty"`
	Message string        `json:"message,omitempty"`
	Policy  *audit.Policy `json:"policy,omitempty"`
	Source  string        `json:"source"`
}

// bucket is a bar of the chart: the events of one span of time, by
// outcome (every outcome but ok and denied counts as an error).
type bucket struct {
	Start  string `json:"start"`
	OK     int    `json:"ok"`
	Denied int    `json:"denied"`
	Error  int    `json:"error"`
}

// chain is whether a trail's chain holds.
type chain struct {
	File   string `json:"file"`
	OK     bool   `json:"ok"`
	Events int    `json:"events"`
	Anchor string `json:"anchor,omitempty"`
	Break  string `json:"break,omitempty"`
}

// audit is the trail: the latest events that pass the filters (as arca
// audit's), the chart of all that pass them, the latest denials with their
// verdicts, and whether each trail's chain holds.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := filterOf(q.Get, s.o.Now())
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	_, limit, ok := page(w, "", q.Get("limit"))
	if !ok {
		return
	}
	var (
		latest, denied []event
		stamps         []stamped
		chains         []chain
	)
	for _, path := range s.o.AuditFiles {
		c, err := scanTrail(path, f, func(e trail.Entry) {
			ev := eventOf(e)
			latest = keepLast(latest, ev, limit)
			if e.Event.Outcome == audit.Denied {
				denied = keepLast(denied, ev, limit)
			}
			stamps = append(stamps, stamped{e.TS, e.Event.Outcome})
		})
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		chains = append(chains, c)
	}
	slices.Reverse(latest)
	slices.Reverse(denied)
	writeJSON(w, http.StatusOK, map[string]any{"events": latest, "denied": denied, "matched": len(stamps),
		"chart": chart(stamps), "chains": chains})
}

// scanTrail hands fn every event of the trail at path that f picks, and
// verifies its chain. A trail not there yet is empty.
func scanTrail(path string, f trail.Filter, fn func(trail.Entry)) (chain, error) {
	c := chain{File: path}
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		c.OK = true
		return c, nil
	}
	if err != nil {
		return c, err
	}
	defer fh.Close()
	res, verr := trail.Verify(fh, nil)
	c.Events = res.Lines
	var b *trail.Break
	switch {
	case errors.As(verr, &b):
		c.Break = b.Error()
	case verr != nil:
		return c, verr
	default:
		c.OK = true
		if res.Lines > 0 {
			c.Anchor = res.Last.String()
		}
	}
	if _, err := fh.Seek(0, 0); err != nil {
		return c, err
	}
	// A trail whose chain broke is still shown, up to the first line that
	// is not an event.
	_ = trail.Scan(fh, f, func(e trail.Entry) error { fn(e); return nil })
	return c, nil
}

func eventOf(e trail.Entry) event {
	ev := e.Event
	return event{TS: ev.TS, Seq: ev.Seq, Event: ev.Event, Op: ev.Op, Outcome: ev.Outcome, Env: ev.Env, Ref: ev.Ref,
		Actor: ev.Actor, Message: ev.Message, Policy: ev.Policy, Source: ev.Source}
}

// keepLast appends ev to evs, keeping the last n.
func keepLast(evs []event, ev event, n int) []event {
	if len(evs) == n {
		copy(evs, evs[1:])
		evs = evs[:n-1]
	}
	return append(evs, ev)
}

// stamped is an event's time and outcome, all the chart needs of it.
type stamped struct {
	ts      time.Time
	outcome string
}

// chart puts the events into Buckets bars of equal span, from the first
// event's time to the last's.
func chart(evs []stamped) []bucket {
	if len(evs) == 0 {
		return []bucket{}
	}
	first, last := evs[0].ts, evs[0].ts
	for _, e := range evs {
		first, last = minTime(first, e.ts), maxTime(last, e.ts)
	}
	span := last.Sub(first)/Buckets + 1
	out := make([]bucket, Buckets)
	for i := range out {
		out[i].Start = audit.FormatTime(first.Add(time.Duration(i) * span))
	}
	for _, e := range evs {
		b := &out[min(int(e.ts.Sub(first)/span), Buckets-1)]
		switch e.outcome {
		case audit.OK:
			b.OK++
		case audit.Denied:
			b.Denied++
		default:
			b.Error++
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
