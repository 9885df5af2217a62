package inspector

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
)

// auditView is the audit page: the filters, the verification, a page of
// matching records, the retention policy and the last deletion.
type auditView struct {
	On                            bool
	Principal, Subject, Op, Since string
	Verified                      bool
	VerifyError                   string
	Report                        audit.Report
	// LateAfter is audit.LateAfter, for the warning of Report.Late.
	LateAfter      time.Duration
	LastAnchor     *audit.Record
	LastAnchorTime string
	// LastDelete is the newest thread deletion in the trail: what a
	// retention sweep (or anyone) deleted last.
	LastDelete *auditRow
	// LastSweep is the newest retention sweep that could delete: its
	// record (target "retention:" and the policy), written before it ran,
	// by `memvault threads sweep` or by the background sweeper.
	LastSweep      *auditRow
	Retention      *Retention
	RetentionRules []string
	Rows           []auditRow
	Matched        int
	Pager          pager
	Action         string
}

// auditRow is one record as the page shows it (records hold no values).
type auditRow struct {
	Seq                                  int64
	Time, Principal, Op, Target, Subject string
	KeyID                                string
}

func rowOf(rec audit.Record) auditRow {
	return auditRow{Seq: rec.Seq, Time: when(rec.Time), Principal: rec.Principal, Op: rec.Op, Target: rec.Target, Subject: rec.Subject, KeyID: rec.KeyID}
}

// seqParam reads a record number cursor (?before= or ?after=).
func seqParam(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a record number", ErrBadRequest, name, s)
	}
	return n, nil
}

// auditView shows the trail newest first with filters (?principal= ?subject=
// ?op= ?since= a time or a duration), whether it verifies, and its last
// anchor. It reads records (never values): nothing is recorded.
//
// The trail is read once per request (Trail.CheckRecords verifies it and
// hands over the records in the same pass), and memory stays one page
// whatever the request asks: pages are cursors on record numbers, not
// page numbers — ?before=N shows the newest page of matches below record
// N, ?after=N the page of matches just above it — so a ring of one page
// keeps the page's records while the pass counts the rest.
func (in *Inspector) auditView(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	before, err := seqParam(q, "before")
	if err != nil {
		return "", nil, err
	}
	after, err := seqParam(q, "after")
	if err != nil {
		return "", nil, err
	}
	if before > 0 && after > 0 {
		return "", nil, fmt.Errorf("%w: before and after together", ErrBadRequest)
	}
	v := &auditView{On: in.h.Audit != nil, Principal: q.Get("principal"), Subject: q.Get("subject"), Op: q.Get("op"), Since: q.Get("since"),
		Action: in.link("/audit", nil), Retention: in.opt.Retention}
	if v.Retention != nil {
		v.RetentionRules = v.Retention.rules()
	}
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
	match := func(rec audit.Record) bool {
		return (v.Principal == "" || rec.Principal == v.Principal) &&
			(v.Op == "" || rec.Op == v.Op || strings.HasPrefix(rec.Op, v.Op+"."))
	}
	ps := in.opt.PageSize
	// ring keeps the newest ps matches below before (the ?before= and the
	// first page); page keeps the first ps matches above after.
	ring := make([]auditRow, 0, ps)
	next := 0
	var newer, older int // matches newer / older than the page
	var lastAnchor, lastDelete, lastSweep *audit.Record
	rep, err := in.h.Audit.CheckRecords(r.Context(), nil, audit.Filter{}, func(rec audit.Record) error {
		switch rec.Op {
		case audit.OpAnchor:
			a := rec
			lastAnchor = &a
		case audit.OpThreadDelete:
			d := rec
			lastDelete = &d
			if strings.HasPrefix(rec.Target, "retention:") {
				lastSweep = &d
			}
		}
		// The filter is applied here, not by CheckRecords: the anchor and
		// the last deletion are the trail's, whatever the filter.
		// f.Keeps, as `audit show` filters: a subject's records include
		// listings of every thread and changes of unknown targets.
		if !f.Keeps(rec) || !match(rec) {
			return nil
		}
		v.Matched++
		switch {
		case after > 0 && rec.Seq <= after:
			older++
		case after > 0:
			if len(ring) < ps {
				ring = append(ring, rowOf(rec))
			} else {
				newer++
			}
		case before > 0 && rec.Seq >= before:
			newer++
		default:
			if len(ring) < ps {
				ring = append(ring, rowOf(rec))
			} else {
				ring[next] = rowOf(rec)
				older++
			}
			next = (next + 1) % ps
		}
		return nil
	})
	switch {
	case err == nil:
		v.Verified = true
	case errors.Is(err, audit.ErrTampered):
		v.VerifyError = err.Error()
	default:
		return "", nil, err
	}
	v.Report, v.LateAfter = rep, audit.LateAfter
	if lastAnchor != nil {
		v.LastAnchor, v.LastAnchorTime = lastAnchor, when(lastAnchor.Time)
	}
	if lastDelete != nil {
		d := rowOf(*lastDelete)
		v.LastDelete = &d
	}
	if lastSweep != nil {
		sw := rowOf(*lastSweep)
		v.LastSweep = &sw
	}
	// Oldest first in the ring (rotated at next once it wrapped), then
	// newest first on the page.
	rows := ring
	if after == 0 && len(ring) == ps {
		rows = append(slices.Clone(ring[next:]), ring[:next]...)
	}
	slices.Reverse(rows)
	v.Rows = rows
	v.Pager = pager{Page: (newer+ps-1)/ps + 1}
	if len(rows) > 0 && newer > 0 {
		pq := cloneValues(q)
		pq.Del("before")
		pq.Set("after", strconv.FormatInt(rows[0].Seq, 10))
		v.Pager.Prev = in.link("/audit", pq)
	}
	if len(rows) > 0 && older > 0 {
		nq := cloneValues(q)
		nq.Del("after")
		nq.Set("before", strconv.FormatInt(rows[len(rows)-1].Seq, 10))
		v.Pager.Next = in.link("/audit", nq)
	}
	return "Audit", v, nil
}
