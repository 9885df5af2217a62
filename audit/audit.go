package audit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Operations recorded by Saver, Store and config.Handle.
const (
	OpCheckpointRead  = "checkpoint.read"
	OpCheckpointWrite = "checkpoint.write"
	OpWritesWrite     = "writes.write"
	OpThreadDelete    = "thread.delete"
	OpItemRead        = "item.read"
	OpItemWrite       = "item.write"
	OpItemDelete      = "item.delete"
	OpItemSearch      = "item.search"
	OpSubjectErase    = "subject.erase"
	OpKEKRotate       = "kek.rotate"
	OpSubjectRotate   = "subject.rotate"
	OpReencrypt       = "reencrypt"
	OpSubjectReadmit  = "subject.readmit"
)

// Record is one audited operation. It never holds values.
type Record struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Op        string    `json:"op"`
	// Target is what the operation touched: a thread id, a namespace and
	// key ("users.carol/diet"), a namespace prefix.
	Target  string `json:"target"`
	Subject string `json:"subject,omitempty"`
	// KeyID names the key the values were sealed or opened with, when
	// known.
	KeyID string `json:"key_id,omitempty"`
	// MAC chains the record to the one before (hex HMAC-SHA256).
	MAC string `json:"mac"`
}

// Table stores the trail. Implementations are safe for concurrent use, also
// by several processes.
type Table interface {
	// Append gives each of rs, in order, the sequence number after the
	// last record's and the MAC that mac computes from the last record's
	// MAC, and stores them in one transaction — atomically with respect to
	// other appenders.
	Append(ctx context.Context, rs []Record, mac func(prevMAC string, r Record) string) error
	// Page returns the records after sequence number after, in order, at
	// most limit of them.
	Page(ctx context.Context, after int64, limit int) ([]Record, error)
}

// ErrTampered is returned by Verify when the trail was edited, cut,
// extended or reordered outside memvault.
var ErrTampered = errors.New("audit: the trail was tampered with")

// Trail records operations in a Table.
type Trail struct {
	table Table
	keys  [][]byte // the first chains new records; all verify
	now   func() time.Time
}

// New returns the trail of table, chained under key (at least 32 bytes).
// Records chained under previous keys (after the master key was rotated)
// still verify.
func New(table Table, key []byte, previous ...[]byte) (*Trail, error) {
	if table == nil {
		return nil, errors.New("audit: nil table")
	}
	t := &Trail{table: table, now: time.Now}
	for _, k := range append([][]byte{key}, previous...) {
		if len(k) < 32 {
			return nil, fmt.Errorf("audit: key of %d bytes, want at least 32", len(k))
		}
		t.keys = append(t.keys, append([]byte(nil), k...))
	}
	return t, nil
}

type principalKey struct{}

// WithPrincipal returns ctx naming who acts (a user, a service); records
// made with it carry the name.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal returns the principal ctx names ("" for none).
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// mac is the record's chained MAC: HMAC-SHA256 under the trail key over
// the previous MAC and the record's fields, each length-prefixed.
func (t *Trail) mac(prev string, r Record) string { return macUnder(t.keys[0], prev, r) }

func macUnder(key []byte, prev string, r Record) string {
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"memvault/audit-record/v1", prev, strconv.FormatInt(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano),
		r.Principal, r.Op, r.Target, r.Subject, r.KeyID} {
		m.Write(binary.AppendUvarint(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Entry is what a caller records: the rest of a Record comes from the
// trail (time, principal, sequence number, MAC).
type Entry struct {
	Op, Target, Subject, KeyID string
}

// Log appends a record of op on target by ctx's principal.
func (t *Trail) Log(ctx context.Context, op, target, subject, keyID string) error {
	return t.LogAll(ctx, []Entry{{Op: op, Target: target, Subject: subject, KeyID: keyID}})
}

// LogAll appends a record per entry, in order, in one transaction.
func (t *Trail) LogAll(ctx context.Context, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	now, who := t.now().UTC().Truncate(time.Microsecond), Principal(ctx)
	rs := make([]Record, len(es))
	for i, e := range es {
		rs[i] = Record{Time: now, Principal: who, Op: e.Op, Target: e.Target, Subject: e.Subject, KeyID: e.KeyID}
	}
	if err := t.table.Append(ctx, rs, t.mac); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Verify reads the whole trail in order and checks every record's place
// and MAC; it returns how many records it checked, and ErrTampered naming
// the first record that does not hold.
func (t *Trail) Verify(ctx context.Context) (int64, error) {
	var n, last int64
	prev := ""
	for {
		page, err := t.table.Page(ctx, last, 1000)
		if err != nil {
			return n, fmt.Errorf("audit: %w", err)
		}
		for _, r := range page {
			if r.Seq != last+1 {
				return n, fmt.Errorf("%w: record %d follows record %d", ErrTampered, r.Seq, last)
			}
			if !t.matches(prev, r) {
				return n, fmt.Errorf("%w: record %d does not match its MAC", ErrTampered, r.Seq)
			}
			prev, last = r.MAC, r.Seq
			n++
		}
		if len(page) < 1000 {
			return n, nil
		}
	}
}

// matches reports whether r's MAC is its MAC under one of the trail's keys.
func (t *Trail) matches(prev string, r Record) bool {
	for _, k := range t.keys {
		if hmac.Equal([]byte(r.MAC), []byte(macUnder(k, prev, r))) {
			return true
		}
	}
	return false
}

// Filter narrows Records.
type Filter struct {
	// Subject keeps the records of one subject ("" for all).
	Subject string
	// Since keeps the records at or after it (zero for all).
	Since time.Time
}

// Records calls fn with each record f keeps, in order.
func (t *Trail) Records(ctx context.Context, f Filter, fn func(Record) error) error {
	var last int64
	for {
		page, err := t.table.Page(ctx, last, 1000)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for _, r := range page {
			last = r.Seq
			if (f.Subject != "" && r.Subject != f.Subject) || (!f.Since.IsZero() && r.Time.Before(f.Since)) {
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
	}
}
