package inspector

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
)

// threadRow is one line of the threads view.
type threadRow struct {
	ID          string
	Link        string
	Checkpoints int
	Latest      string
	Updated     string
}

// threadsView is the threads page: the search and a page of threads.
type threadsView struct {
	Prefix, Meta string
	// Matching says the counts are of checkpoints whose metadata matched.
	Matching bool
	Total    int
	Rows     []threadRow
	Pager    pager
}

// threads lists the threads, most recently checkpointed first: from the
// checkpoint rows alone (nothing decrypted, nothing recorded) when the
// saver can, else, and always with a metadata filter, from List (which
// decrypts, and is recorded as a read of every thread).
func (in *Inspector) threads(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	page, err := pageParam(q)
	if err != nil {
		return "", nil, err
	}
	v := &threadsView{Prefix: q.Get("q"), Meta: q.Get("meta")}
	var filter map[string]any
	if v.Meta != "" {
		k, val, ok := strings.Cut(v.Meta, "=")
		if !ok || k == "" {
			return "", nil, fmt.Errorf("%w: metadata filter %q: want key=value", ErrBadRequest, v.Meta)
		}
		// A JSON value (3, true, "x") matches as that type; anything
		// else as the string it is.
		var fv any = val
		if j, err := jsonvalue.Unmarshal([]byte(val)); err == nil {
			fv = j
		}
		filter = map[string]any{k: fv}
		v.Matching = true
	}
	ctx := r.Context()
	byID := map[string]*threadRow{}
	var order []string
	add := func(id string, n int, latest string) {
		if !strings.HasPrefix(id, v.Prefix) {
			return
		}
		row := byID[id]
		if row == nil {
			row = &threadRow{ID: id}
			byID[id] = row
			order = append(order, id)
		}
		row.Checkpoints += n
		if latest > row.Latest {
			row.Latest = latest
		}
	}
	if lister, ok := in.h.Saver.(checkpointer.ThreadLister); ok && filter == nil {
		for ti, err := range lister.ListThreads(ctx) {
			if err != nil {
				return "", nil, err
			}
			add(ti.ThreadID, ti.Checkpoints, ti.LatestCheckpointID)
		}
	} else {
		for t, err := range in.h.Saver.List(ctx, nil, checkpointer.ListOptions{AllNamespaces: true, Filter: filter}) {
			if err != nil {
				return "", nil, err
			}
			add(t.Config.ThreadID, 1, t.Config.CheckpointID)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return strings.Compare(byID[b].Latest, byID[a].Latest) })
	v.Total = len(order)
	ps := in.opt.PageSize
	lo := min(page*ps, len(order))
	hi := min(lo+ps, len(order))
	for _, id := range order[lo:hi] {
		row := byID[id]
		if ts, ok := checkpointer.IDTime(row.Latest); ok {
			row.Updated = when(ts)
		}
		row.Link = in.link("/thread", url.Values{"id": {id}})
		v.Rows = append(v.Rows, *row)
	}
	v.Pager = in.pagerFor("/threads", q, page, hi < len(order))
	return "Threads", v, nil
}
