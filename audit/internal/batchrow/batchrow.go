package batchrow

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/internal/idlimit"
)

// MaxRecords bounds the records one row may hold (a batch serves at most
// 256 readers): a row claiming more is refused, not decoded.
const MaxRecords = 256

// Split cuts rs into the rows a table stores: a record whose PendingID is
// audit.MemberID(id, k) joins the row begun by the record naming id when
// it is that row's k-th record (0-based) and follows it in sequence;
// every other record begins a row of its own. Records naming the same
// pending id twice stay in rows of their own (the unique index refuses
// the second).
func Split(rs []audit.Record) [][]audit.Record {
	var out [][]audit.Record
	start := 0
	for i := 1; i <= len(rs); i++ {
		if i < len(rs) {
			first := &rs[start]
			k := i - start
			if first.PendingID != "" && k < MaxRecords && rs[i].Seq == first.Seq+int64(k) &&
				rs[i].PendingID == audit.MemberID(first.PendingID, k) {
				continue
			}
		}
		out = append(out, rs[start:i])
		start = i
	}
	return out
}

// member is a chained record of a row before its last, as More stores
// it: time, principal, op, target, subject, key id, link, MAC.
type member [8]string

// More is the more column of the row holding rs (a Split row): "" (NULL)
// for a row of one record.
func More(rs []audit.Record) string {
	if len(rs) < 2 {
		return ""
	}
	ms := make([]member, len(rs)-1)
	for i, r := range rs[:len(rs)-1] {
		ms[i] = member{r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC}
	}
	b, _ := json.Marshal(ms) // strings only: it cannot fail
	return string(b)
}

// Expand returns the records of a row: last as its columns read (Seq,
// fields, Link, MAC; PendingID the pending_id column), more its more
// column ("" for none).
func Expand(last audit.Record, more string) ([]audit.Record, error) {
	if more == "" {
		return []audit.Record{last}, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: the row of record %d holds a malformed batch (%s)", audit.ErrTampered, last.Seq, why)
	}
	ms, err := members(more) // not []member: a short member must not read as one with empty fields
	if err != nil {
		return nil, bad(err.Error())
	}
	if len(ms) == 0 || len(ms) >= MaxRecords || last.PendingID == "" || strings.Contains(last.PendingID, ".") {
		return nil, bad("no pending id, or a wrong number of records")
	}
	first := last.Seq - int64(len(ms))
	if first < 1 {
		return nil, bad("sequence numbers below 1")
	}
	out := make([]audit.Record, 0, len(ms)+1)
	for i, m := range ms {
		if len(m) != len(member{}) {
			return nil, bad("a record of " + strconv.Itoa(len(m)) + " fields")
		}
		t, err := time.Parse(time.RFC3339Nano, m[0])
		if err != nil {
			return nil, bad(idlimit.Name("time", m[0]))
		}
		out = append(out, audit.Record{Seq: first + int64(i), Time: t.UTC(), Principal: m[1], Op: m[2], Target: m[3], Subject: m[4], KeyID: m[5],
			Link: m[6], MAC: m[7], PendingID: audit.MemberID(last.PendingID, i)})
	}
	last.PendingID = audit.MemberID(last.PendingID, len(ms))
	return append(out, last), nil
}

// pendingMember is a pending row's record after its first: time,
// principal, op, target, subject, key id.
type pendingMember [6]string

// PendingMore is the more column of pending row p: "" (NULL) for a row of
// one record.
func PendingMore(p *audit.Pending) string {
	if len(p.More) == 0 {
		return ""
	}
	ms := make([]pendingMember, len(p.More))
	for i, e := range p.More {
		ms[i] = pendingMember{e.Time.UTC().Format(time.RFC3339Nano), e.Principal, e.Op, e.Target, e.Subject, e.KeyID}
	}
	b, _ := json.Marshal(ms)
	return string(b)
}

// ExpandPending sets p.More from its row's more column. A malformed one
// leaves p's MAC unmatched (More is then a marker record the MAC cannot
// cover): the chainer and Check report the row as tampered with.
func ExpandPending(p *audit.Pending, more string) {
	p.More = nil
	if more == "" {
		return
	}
	ms, err := members(more)
	if err != nil || len(ms) == 0 || len(ms) >= MaxRecords {
		p.More = []audit.PendingEntry{{Op: "malformed batch"}}
		return
	}
	p.More = make([]audit.PendingEntry, len(ms))
	for i, m := range ms {
		var t time.Time
		var err error
		if len(m) == len(pendingMember{}) {
			t, err = time.Parse(time.RFC3339Nano, m[0])
		}
		if len(m) != len(pendingMember{}) || err != nil {
			p.More = []audit.PendingEntry{{Op: "malformed batch"}}
			return
		}
		p.More[i] = audit.PendingEntry{Time: t.UTC(), Principal: m[1], Op: m[2], Target: m[3], Subject: m[4], KeyID: m[5]}
	}
}

// errTooMany is members' refusal of a column of MaxRecords members or more.
var errTooMany = errors.New("too many records")

// members decodes a more column, a JSON array of arrays of strings, one
// member at a time: one of MaxRecords members or more is refused at the
// MaxRecords-th, so that a row edited to hold millions of members costs
// its reader no more than a row can hold.
func members(more string) ([][]string, error) {
	dec := json.NewDecoder(strings.NewReader(more))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("not an array")
	}
	var ms [][]string
	for dec.More() {
		if len(ms) >= MaxRecords {
			return nil, errTooMany
		}
		var m []string
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, errors.New("not an array")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the array")
	}
	return ms, nil
}
