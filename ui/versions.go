package ui

import (
	"context"
	"net/http"
	"time"

	"github.com/arca-secrets/arca/audit"
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

// DeletedList is an env's soft-deleted names, sorted by ref.
type DeletedList struct {
	Env     string    `json:"env"`
	Deleted []Deleted `json:"deleted"`
}

// Histories is what the page reads of names' versions: each read passes
// the guardrails and is audited as the CLI's, and none returns a value.
type Histories interface {
	History(ctx context.Context, env, ref string) (History, error)
	Deleted(ctx context.Context, env string) (DeletedList, error)
}

// history is a name's versions (the query's env and ref), never a value.
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("ref") == "" {
		badRequest(w, "ref is required")
		return
	}
	h, err := s.o.Histories.History(r.Context(), q.Get("env"), q.Get("ref"))
	if err != nil {
		fail(w, err)
		return
	}
	if h.Versions == nil {
		h.Versions = []Version{}
	}
	writeJSON(w, http.StatusOK, h)
}

// deleted is an env's soft-deleted names, a page of them (offset and limit
// in the query), apart from its records.
func (s *Server) deleted(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, ok := page(w, q.Get("offset"), q.Get("limit"))
	if !ok {
		return
	}
	res, err := s.o.Histories.Deleted(r.Context(), q.Get("env"))
	if err != nil {
		fail(w, err)
		return
	}
	from := min(offset, len(res.Deleted))
	rows := res.Deleted[from : from+min(limit, len(res.Deleted)-from)]
	if rows == nil {
		rows = []Deleted{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"env": res.Env, "total": len(res.Deleted), "offset": offset, "deleted": rows})
}

// stamp is t as the page's other times are written; "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return audit.FormatTime(t)
}
