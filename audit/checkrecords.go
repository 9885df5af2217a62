package audit

import (
	"context"
	"fmt"
)

// CheckRecords is Check that also calls fn with each record f keeps, in
// order, from the same read of the trail: a viewer that shows records and
// whether they verify reads the trail once, not twice. fn is called for
// every record f keeps, also after the first one that does not verify (a
// reviewer must see what is there); the returned error is then the first
// verification failure (ErrTampered, possibly also ErrUnverifiable) and the
// Report counts the records checked before it. An error reading the table,
// or fn's own error (which stops the walk), is returned as it is: neither
// is ErrTampered.
func (t *Trail) CheckRecords(ctx context.Context, anchors []Anchor, f Filter, fn func(Record) error) (Report, error) {
	ac, err := t.newAnchorCheck(anchors)
	if err != nil {
		return Report{}, err
	}
	w := t.newWalker(false, ac)
	if w.began, err = t.chainBegan(ctx); err != nil {
		return Report{}, err
	}
	var failed error
	var after int64
	for {
		page, err := t.table.Page(ctx, after, pageSize)
		if err != nil {
			return w.report(anchors), fmt.Errorf("audit: %w", err)
		}
		for i := range page {
			r := &page[i]
			after = r.Seq
			if failed == nil {
				failed = w.step(r)
			}
			if !f.keeps(*r) {
				continue
			}
			if err := fn(*r); err != nil {
				return w.report(anchors), err
			}
		}
		if len(page) < pageSize {
			break
		}
	}
	if failed == nil {
		failed = w.finish()
	}
	rep := w.report(anchors)
	if failed == nil {
		failed = t.checkAllPending(ctx, &rep)
	}
	return rep, failed
}

// report is what the walker checked, as Check returns it.
func (w *walker) report(anchors []Anchor) Report {
	return Report{Records: w.n, Vouched: w.vouched, Anchors: len(anchors), Seq: w.last, Link: w.link, Late: w.late, FirstLate: w.firstLate}
}
