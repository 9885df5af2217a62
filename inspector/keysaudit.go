package inspector

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/vault"
)

type keysView struct {
	Encrypted bool
	KeyIDs    []string
	Subjects  bool
	Rows      []vault.CensusRow
	// Retired counts the values under a key that is not the primary: what
	// must be re-encrypted before that key is retired.
	Retired int64
}

// keys shows the key census: stored values per table, cipher and key id,
// counted in SQL (nothing decrypted, nothing recorded).
func (in *Inspector) keys(r *http.Request) (string, any, error) {
	rows, err := in.h.Census(r.Context())
	if err != nil {
		return "", nil, err
	}
	v := &keysView{Encrypted: in.h.Keyring != nil, KeyIDs: in.h.KeyIDs(), Subjects: in.h.Keys != nil, Rows: rows}
	for _, row := range rows {
		if row.Role != "" && row.Role != "primary" && row.Cipher != "" {
			v.Retired += row.Rows
		}
	}
	return "Keys", v, nil
}

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
	// Records come oldest first: keep the last (page+1)*size+1 that match,
	// a window that slides, so memory stays bounded by the page asked for.
	ps := in.opt.PageSize
	keep := (page+1)*ps + 1
	window := make([]audit.Record, 0, keep)
	err = in.h.Audit.Records(ctx, f, func(rec audit.Record) error {
		if rec.Op == audit.OpAnchor {
			a := rec
			v.LastAnchor = &a
		}
		if v.Principal != "" && rec.Principal != v.Principal {
			return nil
		}
		if v.Op != "" && rec.Op != v.Op && !strings.HasPrefix(rec.Op, v.Op+".") {
			return nil
		}
		v.Matched++
		if len(window) == keep {
			copy(window, window[1:])
			window = window[:keep-1]
		}
		window = append(window, rec)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if v.LastAnchor != nil {
		v.LastAnchorTime = when(v.LastAnchor.Time)
	}
	// Newest first: page p is window[len-1-p*ps] down.
	hi := len(window) - page*ps
	lo := max(hi-ps, 0)
	for i := hi - 1; i >= lo && i >= 0; i-- {
		rec := window[i]
		v.Rows = append(v.Rows, auditRow{Seq: rec.Seq, Time: when(rec.Time), Principal: rec.Principal, Op: rec.Op, Target: rec.Target, Subject: rec.Subject, KeyID: rec.KeyID})
	}
	v.Pager = in.pagerFor("/audit", q, page, v.Matched > (page+1)*ps)
	return "Audit", v, nil
}
