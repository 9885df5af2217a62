package binding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/serde"
)

// Fence is what a write must check, inside its own critical section, so
// that an erasure and the write cannot interleave: the data keys that
// sealed the write's values of a subject. Drivers run it after taking
// their write lock (SQLite's, the memory backend's mutex: Check) or as the
// first statement of their transaction (PostgreSQL: Statements, whose row
// lock makes the erasure wait for the write). An erasure destroys the keys
// before it deletes rows, so a write either commits first, and its rows
// are deleted, or finds its key gone and fails with keys.ErrSubjectErased,
// storing nothing. The zero value (and nil) is an empty fence.
type Fence struct {
	seals []fenceSeal
	// bound are the subjects the threads of seals' own key sets are bound
	// to (metadata mode: keys.ThreadKeyOwner): a write of such a thread
	// also checks its subject's erasure guard, which an erasure of the
	// subject records under the subject's name only
	// (TestReviewS25MetadataModeGuardChecksThreadOwner).
	bound []string
}

type fenceSeal struct{ subject, keyID string }

// keyringer is what serde.Encrypted offers: its keys, the sealing one
// first.
type keyringer interface{ Keyring() *crypto.Keyring }

// add records that b sealed a value of subject, and the keys ctx pinned
// (PinThread). A nil fence records nothing.
func (f *Fence) add(ctx context.Context, subject string, b any) {
	if f == nil {
		return
	}
	if kr, ok := b.(keyringer); ok {
		f.addSeal(fenceSeal{subject, kr.Keyring().Primary().ID().String()})
	}
	if pins, ok := ctx.Value(pinsKey{}).([]fenceSeal); ok {
		for _, p := range pins {
			f.addSeal(p)
		}
	}
}

func (f *Fence) addSeal(s fenceSeal) {
	if !slices.Contains(f.seals, s) {
		f.seals = append(f.seals, s)
	}
}

// pinsKey is the context key of the keys PinThread pinned.
type pinsKey struct{}

// metadataSubjects is what keys.Hierarchy offers besides SubjectKeys: the
// rule that names a thread's subject in its checkpoint metadata.
type metadataSubjects interface{ Subjects() keys.Subjects }

// PinThread binds thread to the subject md names, if any
// (keys.Subjects.ThreadMetadataKey; refused as a synchronous put would be),
// and returns ctx carrying the data keys that seal a write of thread
// now — the thread's key set's newest key and, when md names the thread's
// subject (keys.Subjects.ThreadMetadataKey), that subject's — for a write
// made later with it: a queued write (checkpointer/durable). The write is
// then fenced by those keys as well as by the ones that seal it when it is
// made, so an erasure in between refuses it (keys.ErrSubjectErased), even
// when the subject was readmitted with new keys meanwhile; key rotation,
// which keeps older keys, does not. A subject erased now fails here, as a
// synchronous write would. Without per-subject keys ctx is returned as it
// is.
func PinThread(ctx context.Context, s serde.Serializer, thread string, md map[string]any) (context.Context, error) {
	sk, ok := s.(SubjectKeys)
	if !ok {
		return ctx, nil
	}
	// The subject md names binds the thread now, as a synchronous put
	// binds it before it seals: an erasure of the subject while the write
	// is queued then reaches the thread's earlier rows (those of an
	// anonymous thread before the login among them), not only the write.
	if err := sk.BindThread(ctx, thread, md); err != nil {
		return ctx, err
	}
	var pins []fenceSeal
	pin := func(subject string) error {
		if subject == "" {
			return nil
		}
		b, err := sk.SubjectSerializer(ctx, subject, true)
		if err != nil {
			return err
		}
		if kr, ok := b.(keyringer); ok {
			pins = append(pins, fenceSeal{subject, kr.Keyring().Primary().ID().String()})
		}
		return nil
	}
	owner, err := sk.ThreadKeySubject(ctx, thread)
	if err == nil {
		err = pin(owner)
	}
	if ms, ok := s.(metadataSubjects); ok && err == nil {
		if name := ms.Subjects().MetadataSubject(md); name != "" && name != owner {
			err = pin(name)
		}
	}
	if err != nil || len(pins) == 0 {
		return ctx, err
	}
	return context.WithValue(ctx, pinsKey{}, pins), nil
}

// Merge adds o's keys to f.
func (f *Fence) Merge(o *Fence) {
	if o == nil {
		return
	}
	for _, s := range o.seals {
		f.addSeal(s)
	}
	for _, s := range o.bound {
		f.addBound(s)
	}
}

func (f *Fence) addBound(subject string) {
	if !slices.Contains(f.bound, subject) {
		f.bound = append(f.bound, subject)
	}
}

// addSealed records in f that b sealed a value of subject (Fence.add)
// and, when subject is a thread's own key set, the subject the thread is
// bound to, whose erasure guard the write checks too.
func (c Codec) addSealed(ctx context.Context, f *Fence, subject string, b any) error {
	if f == nil {
		return nil
	}
	f.add(ctx, subject, b)
	thread, own := keys.ThreadOfKeyOwner(subject)
	if !own {
		return nil
	}
	bound, err := c.subjects.ThreadSubject(ctx, thread)
	if err != nil {
		return err
	}
	if bound != "" {
		f.addBound(bound)
	}
	return nil
}

// guarded returns the subjects whose erasure guard a write fenced by f
// checks, each once, in order (the PostgreSQL guard takes a lock per
// subject: one order for every write).
func (f *Fence) guarded() []string {
	subjects := slices.Clone(f.bound)
	for _, s := range f.seals {
		subjects = append(subjects, s.subject)
	}
	slices.Sort(subjects)
	return slices.Compact(subjects)
}

// Empty reports whether the write sealed nothing of a subject.
func (f *Fence) Empty() bool { return f == nil || len(f.seals) == 0 }

// FenceThread records in f the key that seals thread's values now, for a
// write that stores rows of the thread without sealing a value (a
// checkpoint with no new channel value still names its subject in its
// metadata).
func (c Codec) FenceThread(ctx context.Context, thread string, f *Fence) error {
	if c.subjects == nil || f == nil {
		return nil
	}
	subject, err := c.subjects.ThreadKeySubject(ctx, thread)
	if err != nil || subject == "" {
		return err
	}
	b, err := c.subjects.SubjectSerializer(ctx, subject, true)
	if err != nil {
		return err
	}
	return c.addSealed(ctx, f, subject, b)
}

// FenceItem is FenceThread for a store item's namespace (dotted text).
func (c Codec) FenceItem(ctx context.Context, ns string, f *Fence) error {
	if c.subjects == nil || f == nil {
		return nil
	}
	subject := c.subjects.NamespaceSubject(ns)
	if subject == "" {
		return nil
	}
	b, err := c.subjects.SubjectSerializer(ctx, subject, true)
	if err != nil {
		return err
	}
	f.add(ctx, subject, b)
	return nil
}

// Check fails, wrapping keys.ErrSubjectErased, when a key that sealed
// f's values was destroyed, or when the data database records an erasure
// of one of f's subjects that the key table does not count (a process on a
// copy of the key table: keys.ErasureGuard) — the latter only where writes
// run no guard statement (Statements). Call it inside the write's critical
// section, before committing.
func (c Codec) Check(ctx context.Context, f *Fence) error {
	if f.Empty() || c.subjects == nil {
		return nil
	}
	for _, s := range f.seals {
		if err := c.subjects.LiveKey(ctx, s.subject, s.keyID); err != nil {
			return err
		}
	}
	if _, _, inSQL := c.subjects.ErasureGuardSQL(); inSQL {
		return nil
	}
	for _, s := range f.guarded() {
		if err := c.subjects.CheckErasure(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// FencesInSQL reports whether writes fence themselves with SQL statements
// in their own transaction (Statements), so that an erasure needs no other
// wait for them.
func (c Codec) FencesInSQL() bool {
	if c.subjects == nil {
		return true
	}
	_, ok := c.subjects.FenceSQL()
	return ok
}

// FenceStatement is one statement of a SQL fence, and its arguments.
type FenceStatement struct {
	SQL  string
	Args []any
}

// Statements returns the statements a SQL driver runs first in the
// write's transaction: the key table's fence, when the key table lives in
// the same database (keys.SQLFencer), and the data database's erasure
// guard (keys.ErasureGuard) of each subject, when it has one. ok is false
// when the key table's fence is not among them: the driver then runs
// Check as well, inside the transaction (which checks no guard a
// statement runs).
func (c Codec) Statements(f *Fence) (stmts []FenceStatement, ok bool) {
	if f.Empty() || c.subjects == nil {
		return nil, true
	}
	sql, ok := c.subjects.FenceSQL()
	if ok {
		// In key id order: two writes holding the same keys take them in
		// one order, so they cannot deadlock with each other and an
		// erasure.
		seals := slices.Clone(f.seals)
		slices.SortFunc(seals, func(a, b fenceSeal) int { return strings.Compare(a.keyID, b.keyID) })
		for _, s := range seals {
			stmts = append(stmts, FenceStatement{SQL: sql, Args: []any{s.subject, s.keyID}})
		}
	}
	if guard, known, has := c.subjects.ErasureGuardSQL(); has {
		// After the keys, each subject once, in subject order.
		for _, s := range f.guarded() {
			stmts = append(stmts, FenceStatement{SQL: guard, Args: []any{s, known}})
		}
	}
	return stmts, ok
}

// Refused forgets what is cached of the keys of f's subjects when err
// refuses the write (wraps keys.ErrSubjectErased), and reports whether it
// did. A refusal by a SQL statement (the key table's fence, the erasure
// guard) happens outside keys.Hierarchy, which would otherwise keep
// sealing the subject's writes under the destroyed key it cached, and
// passing the guard a stale count, until the cache expires — after another
// process's Forget and Readmit of the subject, its next write must seal
// under the new key (TestReviewS25LiveProcessAfterReadmit).
func (c Codec) Refused(err error, f *Fence) bool {
	if f.Empty() || c.subjects == nil || !errors.Is(err, keys.ErrSubjectErased) {
		return false
	}
	for _, s := range f.guarded() {
		c.subjects.Evict(s)
	}
	return true
}

// FenceSQLState is the SQLSTATE of a write refused by a SQL fence
// (keys.FenceSQLState).
const FenceSQLState = keys.FenceSQLState

// FenceErr maps the error of a write refused by a SQL fence (an error
// with SQLSTATE FenceSQLState, as pgconn.PgError reports it) to one
// wrapping keys.ErrSubjectErased; other errors are returned as they are.
func FenceErr(err error) error {
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() == FenceSQLState {
		return fmt.Errorf("%w (%v)", keys.ErrSubjectErased, err)
	}
	return err
}
