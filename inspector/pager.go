package inspector

import (
	"fmt"
	"net/url"
	"strconv"
)

// pageParam reads the page number (from 0) of a paged view.
func pageParam(q url.Values) (int, error) { return intParam(q, "page") }

// intParam reads the page number (from 0) in parameter name.
func intParam(q url.Values, name string) (int, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1_000_000 {
		return 0, fmt.Errorf("%w: %s %q is not a page number", ErrBadRequest, name, s)
	}
	return n, nil
}

// pager is the links to the pages around the one shown.
type pager struct {
	Prev, Next string
	Page       int
}

// pagerFor returns the pager of page of a view at path with query q.
func (in *Inspector) pagerFor(path string, q url.Values, page int, more bool) pager {
	p := pager{Page: page + 1}
	if page > 0 {
		pq := cloneValues(q)
		pq.Set("page", strconv.Itoa(page-1))
		p.Prev = in.link(path, pq)
	}
	if more {
		nq := cloneValues(q)
		nq.Set("page", strconv.Itoa(page+1))
		p.Next = in.link(path, nq)
	}
	return p
}

func cloneValues(q url.Values) url.Values {
	c := url.Values{}
	for k, v := range q {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// onePage cuts items, read with a limit of n+1, to n, and reports whether
// there was more: whether the page has a next.
func onePage[T any](items []T, n int) ([]T, bool) {
	if len(items) > n {
		return items[:n], true
	}
	return items, false
}
