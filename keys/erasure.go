package keys

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/memvault/memvault/internal/idlimit"
)

// ErrSubjectErased is returned for a write of a subject that was erased:
// nothing of it was stored. An erased subject stays erased: no key is made
// for it again, so a process that still writes its data (with a key it
// cached before the erasure, or not) fails instead of bringing the subject
// back, until Hierarchy.Readmit lets the subject start again.
var ErrSubjectErased = errors.New("keys: the subject was erased (its data keys are destroyed)")

// ErrErasurePending is returned by an erasure that destroyed the keys and
// deleted the rows but could not yet verify that no copy of the key bytes
// stays in the key table's storage (a reader holds an old page or
// snapshot). Running the erasure again finishes it.
var ErrErasurePending = errors.New("keys: erasure pending")

// ErrSubjectMismatch is the error of a write that would store one
// subject's values where another subject's keys (or the master key) seal
// them: a thread bound to another subject by its metadata, or a copy of a
// subject's thread to a thread whose id names someone else, or no one.
// Such values would outlive their subject's erasure.
var ErrSubjectMismatch = errors.New("keys: the thread belongs to another subject")

// DefaultPurgeWait is how long a purge waits for readers that may still
// see destroyed keys when PurgeOptions.Wait is 0.
const DefaultPurgeWait = 30 * time.Second

// Erasure is the durable record of a subject's erasure: written, in the
// same transaction that destroys the keys, before anything else is
// deleted, so that an erasure killed part-way is finished by the next run
// and its receipt names every key it destroyed.
type Erasure struct {
	// Subject is the subject erased.
	Subject string
	// Started is when the erasure (its first run) destroyed the keys.
	Started time.Time
	// KeyIDs are the ids of every key destroyed, over every run.
	KeyIDs []string
	// Threads and Items count the rows deleted, over every run.
	Threads, Items int
	// Done is set once the rows are deleted and the key bytes are verified
	// gone; Finished is when.
	Done     bool
	Finished time.Time
	// Readmitted is set when the subject was let back (Readmit) after the
	// erasure finished: new keys may be made for it again.
	Readmitted bool
	// Trace is the table's own note of what must be physically purged
	// (fingerprints of the destroyed bytes, a transaction id): never key
	// material.
	Trace []byte
}

// PurgeOptions configures ErasureTable.Purge.
type PurgeOptions struct {
	// Wait bounds how long to wait for readers that may still see the
	// destroyed keys; 0 means DefaultPurgeWait, a negative value not to
	// wait.
	Wait time.Duration
	// Progress, when set, is told what the purge waits for.
	Progress func(msg string)
}

func (o PurgeOptions) wait() time.Duration {
	switch {
	case o.Wait == 0:
		return DefaultPurgeWait
	case o.Wait < 0:
		return 0
	}
	return o.Wait
}

// Deadline returns when a purge started now must give up waiting.
func (o PurgeOptions) Deadline(now time.Time) time.Time { return now.Add(o.wait()) }

// Retry runs one purge attempt after another until one finds nothing left
// (once returns ""), opt's wait runs out (then it returns an error wrapping
// ErrErasurePending with the last reason, prefixed by pkg) or ctx ends.
// once gets how long it may itself block waiting for readers. Tables'
// Purge methods share it.
func (o PurgeOptions) Retry(ctx context.Context, pkg string, once func(patience time.Duration) (string, error)) error {
	deadline := o.Deadline(time.Now())
	pause := 50 * time.Millisecond
	for {
		reason, err := once(max(min(time.Until(deadline), time.Second), time.Millisecond))
		if err != nil || reason == "" {
			return err
		}
		if !time.Now().Add(pause).Before(deadline) {
			o.Say("%s; gave up waiting", reason)
			return fmt.Errorf("%s: %s: %w", pkg, reason, ErrErasurePending)
		}
		o.Say("%s; waiting", reason)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// Say reports msg to Progress, if set.
func (o PurgeOptions) Say(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// ErasureTable is a Table that records erasures and can show a destroyed
// key is physically gone from its storage. Every table of this module
// implements it; erasure (Hierarchy.StartErasure) needs it.
type ErasureTable interface {
	Table
	// StartErasure records, in one transaction, that subject is being
	// erased, with its keys' ids and a trace of their bytes, and deletes
	// those keys. A pending record (an erasure that did not finish) or a
	// finished one not readmitted is kept, and the ids of keys found are
	// added to it; a readmitted one starts over. From then on, until
	// Readmit, Insert of a key of subject and BindThread to it fail with
	// ErrSubjectErased.
	StartErasure(ctx context.Context, subject string, now time.Time) (Erasure, error)
	// Erasure returns subject's erasure record; nil when it has none.
	Erasure(ctx context.Context, subject string) (*Erasure, error)
	// AddErased counts rows of subject's pending erasure: threads is the
	// number of threads a run found to delete (the record keeps the
	// largest, since a rerun finds again those a killed run left, and no
	// more), items is added.
	AddErased(ctx context.Context, subject string, threads, items int) error
	// Purge makes sure no copy of the keys e destroyed stays in the
	// table's storage: it waits (bounded by opt) for readers that may still
	// see them, compacts and checks. It returns an error wrapping
	// ErrErasurePending, saying what holds them, when that cannot be shown
	// yet.
	Purge(ctx context.Context, e Erasure, opt PurgeOptions) error
	// FinishErasure marks subject's pending erasure done.
	FinishErasure(ctx context.Context, subject string, now time.Time) error
	// Readmit lets an erased subject have keys again; it fails for an
	// erasure that is not finished.
	Readmit(ctx context.Context, subject string) error
	// LiveKey reports whether the key of id keyID still exists, whoever
	// owns it now (a thread's own key passes to the subject the thread is
	// bound to); subject is who sealed with it, for messages.
	LiveKey(ctx context.Context, subject, keyID string) (bool, error)
}

// Fingerprint is a trace of a destroyed wrapped key that lets a table
// find a copy of it in its files without keeping it: its length, its
// first bytes (the wrapping's random nonce, not secret) and a SHA-256 of
// the whole.
type Fingerprint struct {
	Len    int
	Prefix [8]byte
	Sum    [32]byte
}

// FingerprintOf returns the fingerprint of wrapped (at least 8 bytes).
func FingerprintOf(wrapped []byte) Fingerprint {
	var f Fingerprint
	f.Len = len(wrapped)
	copy(f.Prefix[:], wrapped)
	f.Sum = sha256.Sum256(wrapped)
	return f
}

// fingerprintSize is the encoded size of one Fingerprint.
const fingerprintSize = 4 + 8 + 32

// AppendFingerprints appends the encoding of fs to dst.
func AppendFingerprints(dst []byte, fs ...Fingerprint) []byte {
	for _, f := range fs {
		dst = binary.BigEndian.AppendUint32(dst, uint32(f.Len))
		dst = append(dst, f.Prefix[:]...)
		dst = append(dst, f.Sum[:]...)
	}
	return dst
}

// ParseFingerprints decodes what AppendFingerprints wrote.
func ParseFingerprints(b []byte) ([]Fingerprint, error) {
	if len(b)%fingerprintSize != 0 {
		return nil, fmt.Errorf("keys: erasure trace of %d bytes is not a list of fingerprints", len(b))
	}
	out := make([]Fingerprint, 0, len(b)/fingerprintSize)
	for ; len(b) > 0; b = b[fingerprintSize:] {
		var f Fingerprint
		f.Len = int(binary.BigEndian.Uint32(b))
		copy(f.Prefix[:], b[4:12])
		copy(f.Sum[:], b[12:fingerprintSize])
		out = append(out, f)
	}
	return out, nil
}

// FindFingerprints reports the first fingerprint of fs whose bytes occur in
// data, or -1. It looks for each one's prefix and checks the hash of the
// window there, so its cost is one pass over data per fingerprint.
func FindFingerprints(data []byte, fs []Fingerprint) int {
	for i, f := range fs {
		if f.Len < len(f.Prefix) {
			continue
		}
		for off := 0; off+f.Len <= len(data); {
			j := bytes.Index(data[off:], f.Prefix[:])
			if j < 0 || off+j+f.Len > len(data) {
				break
			}
			at := off + j
			if sha256.Sum256(data[at:at+f.Len]) == f.Sum {
				return i
			}
			off = at + 1
		}
	}
	return -1
}

// MergeKeyIDs returns the sorted union of a and b.
func MergeKeyIDs(a, b []string) []string {
	out := append([]string{}, a...)
	out = append(out, b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// SQLFencer is an ErasureTable in the same SQL database as the data, which
// gives a statement a write runs inside its own transaction to hold the
// sealing key (keys/pgkeys: a row lock): an erasure then waits for that
// transaction, and a write after the erasure fails. The statement takes the
// subject (for its message) and the key id as its two parameters and fails
// with SQLSTATE FenceSQLState when no key of that id is left.
type SQLFencer interface {
	FenceSQL() string
}

// A SQLFencer whose FenceSQL returns "" cannot fence (it lives in another
// database than the data); writers then check the key inside their
// transaction instead.

// FenceSQLState is the SQLSTATE of a write refused by a SQLFencer's
// statement; drivers map it to ErrSubjectErased.
const FenceSQLState = "MV001"

// erasureTable returns the table's ErasureTable side.
func (h *Hierarchy) erasureTable() (ErasureTable, error) {
	et, ok := h.opts.Table.(ErasureTable)
	if !ok {
		return nil, fmt.Errorf("keys: erasure needs a key table that records erasures (keys.ErasureTable), not %T", h.opts.Table)
	}
	return et, nil
}

// StartErasure destroys subject's data keys, recording the erasure first
// in the same transaction (see ErasureTable.StartErasure), and forgets
// them from this process's cache. From then on every value sealed under
// them fails to decrypt, and every write sealed under them fails with
// ErrSubjectErased; the caller deletes the subject's rows, then calls
// PurgeErasure and FinishErasure. Run again on a pending erasure it
// carries on with it.
func (h *Hierarchy) StartErasure(ctx context.Context, subject string) (Erasure, error) {
	if err := h.opts.Subjects.CheckSubject(subject); err != nil {
		return Erasure{}, err
	}
	et, err := h.erasureTable()
	if err != nil {
		return Erasure{}, err
	}
	e, err := et.StartErasure(ctx, subject, h.opts.Now().UTC())
	h.cache.Remove(subject) // also when it failed part-way
	if ths, terr := h.SubjectThreads(ctx, subject); terr == nil {
		for _, th := range ths {
			h.cache.Remove(ThreadKeyOwner(th)) // their own keys went too
		}
	}
	if err != nil {
		return Erasure{}, fmt.Errorf("keys: destroy keys of %s: %w", idlimit.Name("subject", subject), err)
	}
	return e, nil
}

// CountErased counts rows of subject's pending erasure (see
// ErasureTable.AddErased): threads a run is about to delete, items it
// deleted.
func (h *Hierarchy) CountErased(ctx context.Context, subject string, threads, items int) error {
	et, err := h.erasureTable()
	if err != nil {
		return err
	}
	if err := et.AddErased(ctx, subject, threads, items); err != nil {
		return fmt.Errorf("keys: count erased rows of %s: %w", idlimit.Name("subject", subject), err)
	}
	return nil
}

// PurgeErasure makes sure no copy of the keys e destroyed stays in the key
// table's storage (ErasureTable.Purge); an error wrapping
// ErrErasurePending says what still holds one.
func (h *Hierarchy) PurgeErasure(ctx context.Context, e Erasure, opt PurgeOptions) error {
	et, err := h.erasureTable()
	if err != nil {
		return err
	}
	return et.Purge(ctx, e, opt)
}

// FinishErasure marks subject's erasure done and returns its receipt,
// authenticated under the audit key.
func (h *Hierarchy) FinishErasure(ctx context.Context, subject string) (Receipt, error) {
	et, err := h.erasureTable()
	if err != nil {
		return Receipt{}, err
	}
	if err := et.FinishErasure(ctx, subject, h.opts.Now().UTC()); err != nil {
		return Receipt{}, fmt.Errorf("keys: finish erasure of %s: %w", idlimit.Name("subject", subject), err)
	}
	e, err := et.Erasure(ctx, subject)
	if err != nil {
		return Receipt{}, fmt.Errorf("keys: erasure of %s: %w", idlimit.Name("subject", subject), err)
	}
	if e == nil {
		return Receipt{}, fmt.Errorf("keys: erasure of %s: no record", idlimit.Name("subject", subject))
	}
	return h.ErasureReceipt(*e, ""), nil
}

// ErasureReceipt returns the signed receipt of e; a non-empty pending
// reason marks it pending (the erasure is not finished).
func (h *Hierarchy) ErasureReceipt(e Erasure, pending string) Receipt {
	r := Receipt{Subject: e.Subject, Time: e.Started, KeyIDs: slices.Clone(e.KeyIDs), Threads: e.Threads, Items: e.Items}
	if r.KeyIDs == nil {
		r.KeyIDs = []string{}
	}
	if !e.Done || pending != "" {
		r.Pending = true
		r.PendingReason = pending
		if r.PendingReason == "" {
			r.PendingReason = "not finished"
		}
	} else {
		r.Finished = e.Finished
	}
	h.SignReceipt(&r)
	return r
}

// Readmit lets a subject whose erasure finished come back: new data keys
// are made for it again (its destroyed keys stay destroyed). Until then its
// writes fail with ErrSubjectErased.
func (h *Hierarchy) Readmit(ctx context.Context, subject string) error {
	if err := h.opts.Subjects.CheckSubject(subject); err != nil {
		return err
	}
	et, err := h.erasureTable()
	if err != nil {
		return err
	}
	if err := et.Readmit(ctx, subject); err != nil {
		return fmt.Errorf("keys: readmit %s: %w", idlimit.Name("subject", subject), err)
	}
	return nil
}

// ErrNotErased is returned by Readmit for a subject without a finished
// erasure.
var ErrNotErased = errors.New("keys: the subject has no finished erasure")

// Erasure returns subject's erasure record (nil when it has none).
func (h *Hierarchy) Erasure(ctx context.Context, subject string) (*Erasure, error) {
	et, err := h.erasureTable()
	if err != nil {
		return nil, err
	}
	return et.Erasure(ctx, subject)
}

// ErasedKey reports whether keyID is the id of a data key of subject that
// the subject's erasure destroyed (its record, read from the table, names
// it). A value sealed under such a key and found after the erasure (a data
// backup restored, a forget that did not finish) can never be opened
// again, even once Readmit gave the subject new keys: re-encryption leaves
// it (keys.ErrSubjectErased) rather than taking it for tampering. Only the
// latest erasure's keys are known: a subject erased, readmitted and erased
// again has its first erasure's key ids forgotten (that erasure's record
// started over) — unless this process read them before: destroyed keys
// stay destroyed, so the ids it read are kept, and the record is read
// again only for an id they do not hold (one read for a run over a
// subject's restored rows, not one a row).
func (h *Hierarchy) ErasedKey(ctx context.Context, subject, keyID string) (bool, error) {
	if ids, ok := h.erased.Load(subject); ok && slices.Contains(ids.([]string), keyID) {
		return true, nil
	}
	e, err := h.Erasure(ctx, subject)
	if err != nil || e == nil {
		return false, err
	}
	ids := slices.Clone(e.KeyIDs)
	if old, ok := h.erased.Load(subject); ok {
		for _, id := range old.([]string) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	h.erased.Store(subject, ids)
	return slices.Contains(ids, keyID), nil
}

// LiveKey returns nil when subject still has the data key keyID, and an
// error wrapping ErrSubjectErased when it does not. Writers call it inside
// their write's critical section (see binding.Fence): an erasure then
// either comes after the write, and deletes what it wrote, or before, and
// the write fails. It reads the table, never the cache.
func (h *Hierarchy) LiveKey(ctx context.Context, subject, keyID string) error {
	var live bool
	var err error
	if et, ok := h.opts.Table.(ErasureTable); ok {
		live, err = et.LiveKey(ctx, subject, keyID)
	} else {
		var ks []WrappedKey
		ks, err = h.opts.Table.Keys(ctx, subject)
		live = slices.ContainsFunc(ks, func(k WrappedKey) bool { return k.ID == keyID })
	}
	if err != nil {
		return fmt.Errorf("keys: read keys of %s: %w", idlimit.Name("subject", subject), err)
	}
	if !live {
		h.cache.Remove(subject)
		return fmt.Errorf("keys: write of %s sealed under key %s: %w", idlimit.Name("subject", subject), keyID, ErrSubjectErased)
	}
	return nil
}

// FenceSQL returns the key table's fence statement (SQLFencer) and true
// when the table has one.
func (h *Hierarchy) FenceSQL() (string, bool) {
	f, ok := h.opts.Table.(SQLFencer)
	if !ok {
		return "", false
	}
	sql := f.FenceSQL()
	return sql, sql != ""
}
