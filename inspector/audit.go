package inspector

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
)

// auditView is the audit page: the filters, the verification, a page of
// matching records.
type auditView struct {
	On                            bool
	Principal, Subject, Op, Since string
	Verified                      bool
	VerifyError                   string
	Report                        audit.Report
	LastAnchor                    *audit.Record
	LastAnchorTime                string
	Rows                          []auditRow
	Matched                       int
	Pager                         pager
	Action                        string
}

// errPageFull stops reading the trail once the page has its records.
var errPageFull = errors.New("inspector: page full")

// auditRow is one record as the page shows it (records hold no values).
type auditRow struct {
	Seq                                  int64
	Time, Principal, Op, Target, Subject string
	KeyID                                string
}

// auditView shows the trail newest first with filters (?principal= ?subject=
// ?op= ?since= a time or a duration), whether it verifies, and its last
// anchor. It reads records (never values): nothing is recorded.
func (in *Inspector) auditView(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	page, err := pageParam(q)
	if err != nil {
		return "", nil, err
	}
	v := &auditView{On: in.h.Audit != nil, Principal: q.Get("principal"), Subject: q.Get("subject"), Op: q.Get("op"), Since: q.Get("since"), Action: in.link("/audit", nil)}
	if !v.On {
		return "Audit", v, nil
	}
	var f audit.Filter
	f.Subject = v.Subject
	if v.Since != "" {
		t, err := time.Parse(time.RFC3339, v.Since)
		if err != nil {
			d, derr := time.ParseDuration(v.Since)
			if derr != nil || d < 0 {
				return "", nil, fmt.Errorf("%w: since %q: want a time (RFC 3339) or a duration such as 24h", ErrBadRequest, v.Since)
			}
			t = time.Now().Add(-d)
		}
		f.Since = t
	}
	ctx := r.Context()
	rep, err := in.h.Audit.Check(ctx, nil)
	v.Report = rep
	v.Verified = err == nil
	if err != nil {
		v.VerifyError = err.Error()
	}
	// Records come oldest first and the page is counted from the newest:
	// one pass counts the matches, a second keeps the page's records. Two
	// reads of the trail, but memory stays one page whatever ?page= asks
	// (a window of (page+1)×size records was 686 MB for page 100 000).
	match := func(rec audit.Record) bool {
		return (v.Principal == "" || rec.Principal == v.Principal) &&
			(v.Op == "" || rec.Op == v.Op || strings.HasPrefix(rec.Op, v.Op+"."))
	}
	err = in.h.Audit.Records(ctx, f, func(rec audit.Record) error {
		if rec.Op == audit.OpAnchor {
			a := rec
			v.LastAnchor = &a
		}
		if match(rec) {
			v.Matched++
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if v.LastAnchor != nil {
		v.LastAnchorTime = when(v.LastAnchor.Time)
	}
	// Newest first, page p holds matches [Matched-(p+1)×size, Matched-p×size)
	// counted from the oldest. Records appended since the count are newer
	// than all of them and stop nothing.
	ps := in.opt.PageSize
	hi := v.Matched - page*ps
	lo := max(hi-ps, 0)
	if hi > 0 {
		rows := make([]auditRow, 0, hi-lo)
		i := 0
		err = in.h.Audit.Records(ctx, f, func(rec audit.Record) error {
			if !match(rec) {
				return nil
			}
			if i >= lo && i < hi {
				rows = append(rows, auditRow{Seq: rec.Seq, Time: when(rec.Time), Principal: rec.Principal, Op: rec.Op, Target: rec.Target, Subject: rec.Subject, KeyID: rec.KeyID})
			}
			i++
			if i >= hi {
				return errPageFull
			}
			return nil
		})
		if err != nil && !errors.Is(err, errPageFull) {
			return "", nil, err
		}
		slices.Reverse(rows)
		v.Rows = rows
	}
	v.Pager = in.pagerFor("/audit", q, page, v.Matched > (page+1)*ps)
	return "Audit", v, nil
}
