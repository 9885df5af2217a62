package inspector

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// keysView is the keys page: the configured key ids, the census, and
// (with per-subject keys) the subjects' keys and erasures.
type keysView struct {
	Encrypted bool
	KeyIDs    []string
	Subjects  bool
	Rows      []vault.CensusRow
	// Retired counts the values under a key that is not the primary: what
	// must be re-encrypted before that key is retired.
	Retired int64
	// SubjectRows is a page of the subjects that have keys, in order;
	// MoreSubjects links to the next page, FirstSubjects to the first.
	SubjectRows                 []subjectRow
	MoreSubjects, FirstSubjects string
	Action                      string
	// Lookup is the subject asked for (?subject=), LookedUp what the key
	// table holds of it.
	Lookup   string
	LookedUp *subjectDetail
}

// subjectRow is one key owner's keys, summed up (no key bytes).
type subjectRow struct {
	Subject string
	// Thread is set when the keys are a thread's own (a thread not bound
	// to a subject, metadata mode); Subject is then the thread id.
	Thread        bool
	Keys          int
	Current, KEKs string
	Created       string
	Link          string
	// Erasure notes an erasure record of a subject that has keys again
	// (readmitted).
	Erasure string
}

// subjectDetail is one subject's keys and erasure record.
type subjectDetail struct {
	Keys    []keyRow
	Erased  bool
	Erasure string
	// Erase links to the confirmation of the subject's erasure (write
	// actions on only).
	Erase string
}

// keyRow is one data key (never its bytes).
type keyRow struct {
	Version      int
	ID, KEK, Age string
}

// subjectScan bounds the key table reads of one page of subjects.
const subjectScan = 500

// keys shows the key census: stored values per table, cipher and key id,
// counted in SQL; with per-subject keys, a page of the subjects that have
// keys (?after= the last subject of the previous page) and one subject's
// keys and erasure record (?subject=). Nothing is decrypted, nothing
// recorded; key bytes are never read out of the table's rows.
func (in *Inspector) keys(r *http.Request) (string, any, error) {
	ctx := r.Context()
	rows, err := in.h.Census(ctx)
	if err != nil {
		return "", nil, err
	}
	v := &keysView{Encrypted: in.h.Keyring != nil, KeyIDs: in.h.KeyIDs(), Subjects: in.h.Keys != nil, Rows: rows, Action: in.link("/keys", nil)}
	for _, row := range rows {
		if row.Role != "" && row.Role != "primary" && row.Cipher != "" {
			v.Retired += row.Rows
		}
	}
	if v.Subjects {
		q := r.URL.Query()
		if err := in.subjectPage(ctx, q, v); err != nil {
			return "", nil, err
		}
		if v.Lookup = q.Get("subject"); v.Lookup != "" {
			if v.LookedUp, err = in.subject(ctx, v.Lookup); err != nil {
				return "", nil, err
			}
			if in.opt.AllowWrite {
				v.LookedUp.Erase = in.link("/confirm/erase-subject", url.Values{"subject": {v.Lookup}})
			}
		}
	}
	return "Keys", v, nil
}

// subjectPage fills v with the page of key owners after ?after=.
func (in *Inspector) subjectPage(ctx context.Context, q url.Values, v *keysView) error {
	after := q.Get("after")
	if after != "" {
		v.FirstSubjects = in.link("/keys", nil)
	}
	ps := in.opt.PageSize
	var cur *subjectRow
	var keks []string
	flush := func() {
		if cur != nil {
			cur.KEKs = strings.Join(keks, ", ")
			v.SubjectRows = append(v.SubjectRows, *cur)
		}
		cur, keks = nil, nil
	}
	afterV := 1 << 30 // past every version of after
	for scans := 0; scans < subjectScan/100; scans++ {
		page, err := in.h.Keys.KeyPage(ctx, after, afterV, 100)
		if err != nil {
			return err
		}
		for _, k := range page {
			if cur == nil || cur.Subject != k.Subject {
				flush()
				if len(v.SubjectRows) == ps {
					v.MoreSubjects = in.link("/keys", url.Values{"after": {keyOwner(v.SubjectRows[ps-1])}})
					return in.erasures(ctx, v)
				}
				cur = &subjectRow{Subject: k.Subject}
				if th, ok := keys.ThreadOfKeyOwner(k.Subject); ok {
					cur.Subject, cur.Thread = th, true
				} else {
					cur.Link = in.link("/keys", url.Values{"subject": {k.Subject}}) + "#subject"
				}
			}
			// Versions come in order: the last is the one that seals.
			cur.Keys++
			cur.Current, cur.Created = k.ID, when(k.Created)
			if !slices.Contains(keks, k.KEK) {
				keks = append(keks, k.KEK)
			}
			after, afterV = k.Subject, k.Version
		}
		if len(page) < 100 {
			flush()
			return in.erasures(ctx, v)
		}
	}
	// More keys than a page scans: the page ends at the last owner read
	// whole, and the next starts with the one cut (shown cut only when it
	// is alone: an owner with more keys than a scan).
	if len(v.SubjectRows) == 0 {
		cur.Current += " (and more keys)"
		flush()
	}
	cur = nil
	if n := len(v.SubjectRows); n > 0 {
		v.MoreSubjects = in.link("/keys", url.Values{"after": {keyOwner(v.SubjectRows[n-1])}})
	}
	return in.erasures(ctx, v)
}

// keyOwner is the key table's owner of row's keys: the subject, or a
// thread's owner form.
func keyOwner(row subjectRow) string {
	if row.Thread {
		return keys.ThreadKeyOwner(row.Subject)
	}
	return row.Subject
}

// erasures notes, for the subjects of the page, an erasure they were
// readmitted after.
func (in *Inspector) erasures(ctx context.Context, v *keysView) error {
	for i := range v.SubjectRows {
		row := &v.SubjectRows[i]
		if row.Thread {
			continue
		}
		e, err := in.h.Keys.Erasure(ctx, row.Subject)
		if err != nil {
			return err
		}
		if e != nil {
			row.Erasure = erasureText(e)
		}
	}
	return nil
}

// subject reads one subject's keys and erasure record.
func (in *Inspector) subject(ctx context.Context, s string) (*subjectDetail, error) {
	d := &subjectDetail{}
	after, afterV := s, 0
	for len(d.Keys) < subjectScan {
		page, err := in.h.Keys.KeyPage(ctx, after, afterV, 100)
		if err != nil {
			return nil, err
		}
		for _, k := range page {
			if k.Subject != s {
				page = nil
				break
			}
			d.Keys = append(d.Keys, keyRow{Version: k.Version, ID: k.ID, KEK: k.KEK, Age: when(k.Created)})
			afterV = k.Version
		}
		if len(page) < 100 {
			break
		}
	}
	e, err := in.h.Keys.Erasure(ctx, s)
	if err != nil {
		return nil, err
	}
	if e != nil {
		d.Erased = !e.Readmitted
		d.Erasure = erasureText(e)
	}
	return d, nil
}

// erasureText says what an erasure record holds (ids of destroyed keys are
// counted, not listed: the receipt lists them).
func erasureText(e *keys.Erasure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "erased %s: %d key%s destroyed, %d thread%s and %d item%s deleted", when(e.Started),
		len(e.KeyIDs), plural(len(e.KeyIDs)), e.Threads, plural(e.Threads), e.Items, plural(e.Items))
	switch {
	case !e.Done:
		b.WriteString("; NOT finished (`memvault forget` again completes it)")
	case e.Readmitted:
		b.WriteString("; finished " + when(e.Finished) + ", then readmitted (new keys may be made)")
	default:
		b.WriteString("; finished " + when(e.Finished))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
