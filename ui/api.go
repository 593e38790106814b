package ui

import (
	"encoding/json"
	"net/http"
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
	Buckets     = 48  // bars of the events-over-time chart
	MaxMatch    = 256 // bytes of a records search
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

// records is a page of an env's records (ops list: audited): those whose
// ns/name q picks (a glob when it holds *, ? or [, else a substring; ""
// picks all), offset and limit in the query, with how many q picks in all.
// The window is the ops layer's, over every record, not over the first
// manifest.MaxListRows.
func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, ok := page(w, q.Get("offset"), q.Get("limit"))
	if !ok {
		return
	}
	match := q.Get("q")
	if len(match) > MaxMatch {
		badRequest(w, "q must be at most "+strconv.Itoa(MaxMatch)+" bytes")
		return
	}
	res, err := s.o.Vaults.List(r.Context(), ops.Request{Op: "list", Env: q.Get("env"), Page: &ops.ListPage{Match: match, Offset: offset, Limit: limit}})
	if err != nil {
		fail(w, err)
		return
	}
	now := s.o.Now()
	rows := make([]record, 0, len(res.Records))
	for _, rec := range res.Records {
		row := record{Ref: rec.Ref, Version: rec.Version, CreatedAt: rec.CreatedAt.String(), UpdatedAt: rec.UpdatedAt.String()}
		rotated := rec.CreatedAt.Time
		if !rec.RotatedAt.IsZero() {
			row.RotatedAt, rotated = rec.RotatedAt.String(), rec.RotatedAt.Time
		}
		row.SinceRotation = int64(now.Sub(rotated) / time.Second)
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"env": res.Env, "q": match, "total": res.Matched, "offset": offset, "limit": limit, "records": rows,
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
		"records": res.Records, "versions": res.Versions, "erased": res.Erased, "problems": res.Problems, "info": res.Info}
	if res.Kind == ops.KindEtcd {
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
	File    string        `json:"file"` // the trail it is in, as arca ui was given it
	at      time.Time     // its ts, read: the order of a merge
	TS      string        `json:"ts"`
	Seq     uint64        `json:"seq"`
	Event   string        `json:"event"`
	Op      string        `json:"op,omitempty"`
	Outcome string        `json:"outcome,omitempty"`
	Env     string        `json:"env,omitempty"`
	Ref     string        `json:"ref,omitempty"`
	Actor   string        `json:"actor,omitempty"`
	User    string        `json:"user,omitempty"` // the OS account that wrote the event
	Host    string        `json:"host,omitempty"` // the machine it was written on
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
// audit's), of every trail merged in time order, the chart of all that
// pass them, the latest denials with their verdicts, and whether each
// trail's chain holds (see trails).
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
	res, err := s.trails(f, limit, Buckets)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// Warm reads every trail into its index: arca ui does it before it prints
// its URL, so that the first page reads only what came since.
func (s *Server) Warm() error {
	for _, idx := range s.indexes {
		if err := idx.Update(); err != nil {
			return err
		}
	}
	return nil
}

// chainOf says whether a trail's chain holds, from its query.
func chainOf(file string, res trail.QueryResult) chain {
	c := chain{File: file, Events: res.Chain.Lines}
	switch {
	case res.Broken != nil:
		c.Break = res.Broken.Error()
	case res.Invalid != nil:
		c.Break = res.Invalid.Error()
	case res.Cut != nil:
		c.Break = res.Cut.Error()
	default:
		c.OK = true
		if res.Chain.Lines > 0 {
			c.Anchor = res.Chain.Last.String()
		}
	}
	return c
}

func eventOf(file string, e trail.Entry) event {
	ev := e.Event
	return event{File: file, at: e.TS, TS: ev.TS, Seq: ev.Seq, Event: ev.Event, Op: ev.Op, Outcome: ev.Outcome, Env: ev.Env, Ref: ev.Ref,
		Actor: ev.Actor, User: ev.User, Host: ev.Host, Message: ev.Message, Policy: ev.Policy, Source: ev.Source}
}
