package inspector

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/store"
)

// memoriesView is the memories page: the namespace tree at ns, and its
// items or a search under it.
type memoriesView struct {
	NS       []string
	NSText   string
	Crumbs   []nsLink
	Children []nsLink
	// MoreChildren says the tree was cut at its limit.
	MoreChildren bool
	Query        string
	Searched     bool
	Indexed      bool
	Items        []itemRow
	Pager        pager
	Action       string
}

// itemRow is one memory as the page shows it.
type itemRow struct {
	Key, NS          string
	Value            shown
	Full             string
	Created, Updated string
	Expires          string
	Score            string
}

// maxChildren caps the sub-namespaces the tree shows at one level.
const maxChildren = 500

// nsText is a namespace as people write it (labels joined by dots).
func nsText(ns store.Namespace) string { return strings.Join(ns, ".") }

// nsQuery is the query naming a namespace: one ns parameter per label (a
// label may hold a dot).
func nsQuery(ns store.Namespace) url.Values {
	return url.Values{"ns": append([]string(nil), ns...)}
}

// memories shows the namespace tree under ?ns= (one parameter per label),
// the items of that namespace a page at a time (listing decrypts: recorded
// as reads), or with ?q= a search under it, ranked by similarity with
// scores when the store has an index. No read refreshes a TTL.
func (in *Inspector) memories(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	page, err := pageParam(q)
	if err != nil {
		return "", nil, err
	}
	if err := in.h.NeedStore(); err != nil {
		return "", nil, err
	}
	ctx := r.Context()
	ns := store.Namespace(q["ns"])
	v := &memoriesView{NS: ns, NSText: nsText(ns), Query: q.Get("q"), Indexed: in.h.Embedder != nil, Action: in.link("/memories", nil)}
	v.Crumbs = append(v.Crumbs, nsLink{Name: "(all)", Link: in.link("/memories", nil)})
	for i := range ns {
		v.Crumbs = append(v.Crumbs, nsLink{Name: ns[i], Link: in.link("/memories", nsQuery(ns[:i+1]))})
	}
	names, err := in.h.Store.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: ns, MaxDepth: len(ns) + 1, Limit: maxChildren + 1})
	if err != nil {
		return "", nil, err
	}
	if len(names) > maxChildren {
		names = names[:maxChildren]
		v.MoreChildren = true
	}
	for _, n := range names {
		if len(n) <= len(ns) {
			continue // ns itself holds items
		}
		v.Children = append(v.Children, nsLink{Name: n[len(ns)], Link: in.link("/memories", nsQuery(n))})
	}
	ps := in.opt.PageSize
	now := time.Now()
	row := func(it store.Item, score *float64) itemRow {
		ir := itemRow{Key: it.Key, NS: nsText(it.Namespace), Value: showValue(it.Value, in.opt.MaxValueBytes),
			Created: when(it.CreatedAt), Updated: when(it.UpdatedAt)}
		if ir.Value.Truncated {
			fq := nsQuery(it.Namespace)
			fq.Set("key", it.Key)
			ir.Full = in.link("/value", fq)
		}
		if !it.ExpiresAt.IsZero() {
			ir.Expires = when(it.ExpiresAt) + " (in " + it.ExpiresAt.Sub(now).Round(time.Second).String() + ")"
		}
		if score != nil {
			ir.Score = strconv.FormatFloat(*score, 'f', 4, 64)
		}
		return ir
	}
	noRefresh := false
	switch {
	case q.Has("q"):
		v.Searched = true
		items, err := in.h.Store.Search(ctx, ns, store.SearchOptions{Query: v.Query, Limit: ps + 1, Offset: page * ps, RefreshTTL: &noRefresh})
		if err != nil {
			return "", nil, err
		}
		items, more := onePage(items, ps)
		for _, it := range items {
			v.Items = append(v.Items, row(it.Item, it.Score))
		}
		v.Pager = in.pagerFor("/memories", q, page, more)
	case len(ns) > 0:
		// Items of exactly ns, in key order; ?after= pages on (the last key
		// of the page before), as store.Lister does.
		l, ok := in.h.Store.(store.Lister)
		if !ok {
			break
		}
		items, err := l.ListItems(ctx, ns, store.ListItemsOptions{After: q.Get("after"), Limit: ps + 1})
		if err != nil {
			return "", nil, err
		}
		items, more := onePage(items, ps)
		for _, it := range items {
			v.Items = append(v.Items, row(it, nil))
		}
		v.Pager = pager{Page: page + 1}
		if q.Get("after") != "" {
			v.Pager.Prev = in.link("/memories", nsQuery(ns)) // the first page: a key cursor only goes on
		}
		if more {
			nq := nsQuery(ns)
			nq.Set("after", items[len(items)-1].Key)
			nq.Set("page", strconv.Itoa(page+1))
			v.Pager.Next = in.link("/memories", nq)
		}
	}
	title := "Memories"
	if len(ns) > 0 {
		title += " " + printableText(v.NSText)
	}
	return title, v, nil
}
