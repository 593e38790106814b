package ui

import (
	"net/http"
	"strings"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
	"github.com/arca-secrets/arca/ops"
)

// Version is one kept version of a name as the page shows it: its number,
// its state and when it was written. Never a value.
type Version struct {
	Version   uint64 `json:"version"`
	State     string `json:"state"` // current, previous or deleted
	WrittenAt string `json:"written_at"`
}

// History is a name's kept versions, newest first.
type History struct {
	Env       string    `json:"env"`
	Ref       string    `json:"ref"`     // "arca://ns/name"
	Current   *uint64   `json:"current"` // nil: no current version (soft-deleted)
	DeletedAt string    `json:"deleted_at,omitempty"`
	Versions  []Version `json:"versions"`
}

// Deleted is a soft-deleted name: the version rm removed, and when.
type Deleted struct {
	Ref       string `json:"ref"`
	Version   uint64 `json:"version"`
	DeletedAt string `json:"deleted_at"`
}

// history is a name's versions (the query's env and ref), never a value:
// the history op's result, as arca history answers it.
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	res, ok := s.historyFor(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, historyOf(res))
}

// historyOf is what the page shows of a history result: its versions'
// numbers, states and times.
func historyOf(res ops.HistoryResult) History {
	h := History{Env: res.Env, Ref: res.Ref, Current: res.Current, DeletedAt: stamp(res.DeletedAt.Time), Versions: make([]Version, 0, len(res.Versions))}
	for _, v := range res.Versions {
		h.Versions = append(h.Versions, Version{Version: v.Version, State: v.State, WrittenAt: stamp(v.CreatedAt.Time)})
	}
	return h
}

// deleted is an env's soft-deleted names, a page of them (offset and limit
// in the query), apart from its records: the rows of list with deleted
// (as arca list --deleted) that carry deleted_at, the window cut by the
// ops layer over all of them.
func (s *Server) deleted(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, ok := page(w, q.Get("offset"), q.Get("limit"))
	if !ok {
		return
	}
	res, err := s.o.Vaults.List(r.Context(), ops.Request{Op: "list", Env: q.Get("env"), Deleted: true,
		Page: &ops.ListPage{DeletedOnly: true, Offset: offset, Limit: limit}})
	if err != nil {
		fail(w, err)
		return
	}
	rows := make([]Deleted, 0, len(res.Records))
	for _, rec := range res.Records {
		rows = append(rows, Deleted{Ref: rec.Ref, Version: rec.Version, DeletedAt: stamp(rec.DeletedAt.Time)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"env": res.Env, "total": res.Matched, "offset": offset, "deleted": rows})
}

// stamp is t as the page's other times are written; "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return audit.FormatTime(t)
}

// RecentEvents bounds the events a record's detail shows.
const RecentEvents = 20

// detail is a record's detail (the query's env and ref): its kept
// versions, as history answers them (an audited history op, never a
// value), and its latest events in the trails, newest first, at most
// RecentEvents, every trail merged.
func (s *Server) detail(w http.ResponseWriter, r *http.Request) {
	res, ok := s.historyFor(w, r)
	if !ok {
		return
	}
	// The name is a valid ref's: letters, digits, ".", "_", "-" and one
	// "/", so as a glob it picks itself alone.
	name := strings.TrimPrefix(res.Ref, "arca://")
	v, err := s.trails(trail.Filter{Env: res.Env, Ref: name}, RecentEvents, 0)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"history": historyOf(res), "events": v.Events, "matched": v.Matched})
}

// historyFor runs the history op for the query's env and ref (an audited
// op, never a value); on a missing ref or an error it answers w itself
// and returns false.
func (s *Server) historyFor(w http.ResponseWriter, r *http.Request) (ops.HistoryResult, bool) {
	q := r.URL.Query()
	if q.Get("ref") == "" {
		badRequest(w, "ref is required")
		return ops.HistoryResult{}, false
	}
	res, err := s.o.Vaults.History(r.Context(), ops.Request{Op: "history", Env: q.Get("env"), Ref: q.Get("ref")})
	if err != nil {
		fail(w, err)
		return ops.HistoryResult{}, false
	}
	return res, true
}
