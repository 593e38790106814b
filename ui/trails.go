package ui

import (
	"slices"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/audit/trail"
)

// trailView is what the page shows of the trails for one filter.
type trailView struct {
	Events  []event  `json:"events"`  // the latest picked, newest first, every trail merged
	Denied  []event  `json:"denied"`  // the latest denials picked, newest first
	Matched int      `json:"matched"` // how many events the filter picks, in all trails
	Chart   []bucket `json:"chart"`   // the picked events over time, one span for all trails
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"` // the time the chart divides: From to To
	Chains  []chain  `json:"chains"`       // each trail's chain, in the order given
}

// trails reads every trail for f: each index reads what was appended
// since it last did (checking the bytes it read before are still there,
// else reading the file again), then answers the latest limit events and
// denials f picks, merged across trails by time (a trail's own order kept
// on a tie), and a chart of bars bars over one span shared by every trail.
// Each trail's chain is its own: a merge shows a broken trail's events
// beside the others', its chain marked as broken.
func (s *Server) trails(f trail.Filter, limit, bars int) (trailView, error) {
	v := trailView{Events: []event{}, Denied: []event{}, Chart: []bucket{}, Chains: []chain{}}
	var span trail.Span
	for _, idx := range s.indexes {
		if err := idx.Update(); err != nil {
			return v, err
		}
		if len(s.indexes) == 1 {
			break // its own span is the chart's
		}
		res, err := idx.Query(f, 0, 0)
		if err != nil {
			return v, err
		}
		if res.Matched > 0 && (span.From.IsZero() || res.First.Before(span.From)) {
			span.From = res.First
		}
		if res.Matched > 0 && res.Last.After(span.To) {
			span.To = res.Last
		}
	}
	for i, idx := range s.indexes {
		res, err := idx.QueryOver(f, limit, bars, span)
		if err != nil {
			return v, err
		}
		file := s.o.AuditFiles[i]
		for _, e := range res.Latest {
			v.Events = append(v.Events, eventOf(file, e))
		}
		for _, e := range res.Denied {
			v.Denied = append(v.Denied, eventOf(file, e))
		}
		v.Matched += res.Matched
		if len(res.Bars) > 0 && len(v.Chart) == 0 {
			v.Chart = make([]bucket, len(res.Bars))
		}
		for k, b := range res.Bars {
			c := &v.Chart[k]
			c.Start, c.OK, c.Denied, c.Error = audit.FormatTime(b.Start), c.OK+b.OK, c.Denied+b.Denied, c.Error+b.Errors
		}
		if res.Matched > 0 && (span.From.IsZero() && len(s.indexes) == 1) {
			v.From, v.To = audit.FormatTime(res.First), audit.FormatTime(res.Last)
		}
		v.Chains = append(v.Chains, chainOf(file, res))
	}
	if !span.From.IsZero() {
		v.From, v.To = audit.FormatTime(span.From), audit.FormatTime(span.To)
	}
	v.Events, v.Denied = newestFirst(v.Events, limit), newestFirst(v.Denied, limit)
	return v, nil
}

// newestFirst is the limit latest of evs (each trail's oldest first, the
// trails one after another), newest first; a stable sort keeps a trail's
// own order, and the earlier trail first, on a tie.
func newestFirst(evs []event, limit int) []event {
	slices.SortStableFunc(evs, func(a, b event) int { return a.at.Compare(b.at) })
	evs = evs[max(0, len(evs)-limit):]
	slices.Reverse(evs)
	return evs
}
