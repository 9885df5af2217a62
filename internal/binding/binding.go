package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/serde"
)

// Location is where a value is stored: Blob, Write or Item.
type Location interface {
	// AppendAAD appends the location's associated data to dst.
	AppendAAD(dst []byte) []byte
}

// Blob locates a checkpoint channel value (a checkpoint_blobs row).
type Blob struct {
	Thread, NS, Channel, Version string
}

// AppendAAD implements Location (domain "memvault/blob/v1").
func (b Blob) AppendAAD(dst []byte) []byte {
	return serde.AppendBlobAAD(dst, b.Thread, b.NS, b.Channel, b.Version)
}

// Write locates a pending write (a checkpoint_writes row). The channel is
// bound too, so a write cannot be relabelled to another channel.
type Write struct {
	Thread, NS, Checkpoint, Task string
	Idx                          int
	Channel                      string
}

// AppendAAD implements Location (domain "memvault/write/v1"; idx as a
// zig-zag varint).
func (w Write) AppendAAD(dst []byte) []byte {
	return serde.AppendWriteAAD(dst, w.Thread, w.NS, w.Checkpoint, w.Task, w.Idx, w.Channel)
}

// Item locates a store item's value; Namespace is the dotted namespace
// text as stored (store.Namespace.String).
type Item struct {
	Namespace, Key string
}

// AppendAAD implements Location (domain "memvault/item/v1").
func (i Item) AppendAAD(dst []byte) []byte {
	return serde.AppendItemAAD(dst, i.Namespace, i.Key)
}

// threadLocation is a location in a thread: Blob or Write.
type threadLocation interface{ thread() string }

func (b Blob) thread() string  { return b.Thread }
func (w Write) thread() string { return w.Thread }

// AAD returns the associated data of a location.
func AAD(at Location) []byte { return at.AppendAAD(make([]byte, 0, 96)) }

// Codec seals and opens values with a serializer, binding them to their
// location when the serializer supports it (serde.BoundSerializer, as
// serde.Encrypted does), under the key of the location's data subject when
// it keeps per-subject keys (SubjectKeys, as keys.Hierarchy does). The
// zero value is unusable; use New.
type Codec struct {
	s        serde.Serializer
	bound    serde.BoundSerializer
	subjects SubjectKeys
}

// SubjectKeys is a serializer that seals each data subject's values under
// the subject's own keys (keys.Hierarchy). Values of no subject ("") go
// through the serializer's own BoundSerializer methods.
type SubjectKeys interface {
	serde.BoundSerializer
	// ThreadSubject is the subject of a thread's values.
	ThreadSubject(ctx context.Context, thread string) (string, error)
	// ThreadKeySubject is whose keys seal a thread's values: its subject,
	// or the thread's own key set while it is not bound to one.
	ThreadKeySubject(ctx context.Context, thread string) (string, error)
	// BindThread records the subject a thread's checkpoint metadata names,
	// before the checkpoint is sealed.
	BindThread(ctx context.Context, thread string, md map[string]any) error
	// BindThreadTo binds a thread to a subject (a copy to its source's).
	BindThreadTo(ctx context.Context, thread, subject string) error
	// FollowThread records that a thread is a copy of another, before
	// the copy writes anything, so that an erasure reaching the source
	// reaches the copy (keys.Hierarchy.FollowThread).
	FollowThread(ctx context.Context, thread, source string) error
	// NamespaceSubject is the subject of a store namespace's values.
	NamespaceSubject(ns string) string
	// SubjectSerializer is the serializer of subject's values; seal asks
	// for one that can seal (creating the subject's first key).
	SubjectSerializer(ctx context.Context, subject string, seal bool) (serde.BoundSerializer, error)
	// Evict forgets what is cached of subject's keys.
	Evict(subject string)
	// EvictThread forgets what is cached of a thread's subject and
	// reports whether anything was.
	EvictThread(thread string) bool
	// LiveKey fails (wrapping keys.ErrSubjectErased) unless subject still
	// has the data key keyID; it reads the key table, not a cache.
	LiveKey(ctx context.Context, subject, keyID string) error
	// ErasedKey reports whether keyID is a data key of subject that its
	// erasure destroyed (keys.Hierarchy.ErasedKey).
	ErasedKey(ctx context.Context, subject, keyID string) (bool, error)
	// FenceSQL returns the key table's fence statement when the table
	// lives in a SQL database (keys.SQLFencer).
	FenceSQL() (string, bool)
	// ErasureGuardSQL returns the data database's erasure guard statement
	// and the count of erasures of the key table to pass it, when writes
	// run it in their transaction (keys.ErasureGuard).
	ErasureGuardSQL() (sql string, known int64, ok bool)
	// CheckErasure fails (wrapping keys.ErrSubjectErased) when the data
	// database records an erasure of subject that the key table does not
	// count (keys.ErasureGuard), for writes that run no guard statement.
	CheckErasure(ctx context.Context, subject string) error
}

// New returns the codec of s.
func New(s serde.Serializer) Codec {
	c := Codec{s: s}
	c.bound, _ = s.(serde.BoundSerializer)
	c.subjects, _ = s.(SubjectKeys)
	return c
}

// subjectOf returns the data subject of a location ("" for none).
func (c Codec) subjectOf(ctx context.Context, at Location) (string, error) {
	switch l := at.(type) {
	case Blob:
		return c.subjects.ThreadKeySubject(ctx, l.Thread)
	case Write:
		return c.subjects.ThreadKeySubject(ctx, l.Thread)
	case Item:
		return c.subjects.NamespaceSubject(l.Namespace), nil
	}
	return "", nil
}

// ItemHasSubject reports whether an item's value is sealed under a data
// subject's keys. Caches of decrypted values must not keep those: a
// subject's erasure must stop them from being read.
func (c Codec) ItemHasSubject(it Item) bool {
	return c.subjects != nil && c.subjects.NamespaceSubject(it.Namespace) != ""
}

// BindThread lets a serializer with per-subject keys record the subject a
// thread's checkpoint metadata names, before the checkpoint is sealed.
func (c Codec) BindThread(ctx context.Context, thread string, md map[string]any) error {
	if c.subjects == nil {
		return nil
	}
	return c.subjects.BindThread(ctx, thread, md)
}

// FollowThread lets a serializer with per-subject keys record that dst
// is a copy of src before the copy is written (see SubjectKeys).
func (c Codec) FollowThread(ctx context.Context, dst, src string) error {
	if c.subjects == nil {
		return nil
	}
	return c.subjects.FollowThread(ctx, dst, src)
}

// FollowsCopies reports whether a copy of a thread is recorded in the key
// table (FollowThread): per-subject keys with subjects named in checkpoint
// metadata. The copy then first checks that its source holds anything, so
// that a copy of nothing records nothing.
func (c Codec) FollowsCopies() bool {
	ms, ok := c.subjects.(metadataSubjects)
	return ok && ms.Subjects().ThreadMetadataKey != ""
}

// boundFor returns the serializer of at's values and their subject.
func (c Codec) boundFor(ctx context.Context, at Location, seal bool) (serde.BoundSerializer, string, error) {
	if c.subjects == nil {
		return c.bound, "", nil
	}
	subject, err := c.subjectOf(ctx, at)
	if err != nil || subject == "" {
		return c.bound, "", err
	}
	b, err := c.subjects.SubjectSerializer(ctx, subject, seal)
	return b, subject, err
}

// open opens a value at at with aad. A value that does not open under the
// subject's cached keys is tried once more after reloading them: another
// process may have given the subject a new key since.
func (c Codec) open(ctx context.Context, at Location, typ string, data, aad []byte) (any, error) {
	b, subject, err := c.boundFor(ctx, at, false)
	if err != nil {
		return nil, err
	}
	v, err := b.LoadsTypedWith(typ, data, aad)
	if c.subjects == nil || !errors.Is(err, serde.ErrDecrypt) {
		return v, err
	}
	if tl, ok := at.(threadLocation); ok {
		// A thread sealed under its own keys (subjects by metadata) may
		// hold values sealed under its subject's keys before thread keys.
		if s, serr := c.subjects.ThreadSubject(ctx, tl.thread()); serr == nil && s != "" && s != subject {
			if sb, serr := c.subjects.SubjectSerializer(ctx, s, false); serr == nil {
				if v, err2 := sb.LoadsTypedWith(typ, data, aad); err2 == nil {
					return v, nil
				}
			}
		}
	}
	// Retry only when something cached may be stale: a genuine failure
	// (tampering, a moved row) is not decrypted twice for nothing.
	evicted := false
	if tl, ok := at.(threadLocation); ok {
		evicted = c.subjects.EvictThread(tl.thread())
	}
	if subject != "" {
		c.subjects.Evict(subject)
		evicted = true
	}
	if !evicted {
		return v, err
	}
	if b, _, err = c.boundFor(ctx, at, false); err != nil {
		return nil, err
	}
	return b.LoadsTypedWith(typ, data, aad)
}

// Serializer returns the codec's serializer.
func (c Codec) Serializer() serde.Serializer { return c.s }

// Bound reports whether values are bound to their location (so that
// copying one elsewhere needs Move, not a byte copy).
func (c Codec) Bound() bool { return c.bound != nil }

// Seal serializes (and, with a bound serializer, encrypts) v for at.
func (c Codec) Seal(ctx context.Context, at Location, v any) (string, []byte, error) {
	return c.SealFenced(ctx, at, v, nil)
}

// SealFenced is Seal that also records in f, when f is not nil, the data
// key that sealed a subject's value, for the write's fence (see Fence).
func (c Codec) SealFenced(ctx context.Context, at Location, v any, f *Fence) (string, []byte, error) {
	return SealAt(ctx, c, at, v, f)
}

// SealAt is c.SealFenced for a location of a concrete type, which it
// boxes into a Location only when per-subject keys need to look at it:
// a plaintext put, or one sealed under the serializer's own keys,
// allocates nothing for its values' locations (one allocation per value
// before, a location being four strings).
func SealAt[L Location](ctx context.Context, c Codec, at L, v any, f *Fence) (string, []byte, error) {
	if c.bound == nil {
		return c.s.DumpsTyped(v)
	}
	if c.subjects == nil {
		return dumpWithAAD(c.bound, at, v)
	}
	b, subject, err := c.boundFor(ctx, at, true)
	if err != nil {
		return "", nil, err
	}
	if subject != "" {
		if err := c.addSealed(ctx, f, subject, b); err != nil {
			return "", nil, err
		}
	}
	return dumpWithAAD(b, at, v)
}

// dumpWithAAD seals v with b, bound to at's associated data, built in a
// reused buffer: a BoundSerializer keeps no aad after returning.
func dumpWithAAD[L Location](b serde.BoundSerializer, at L, v any) (string, []byte, error) {
	bp := aadScratch.Get().(*[]byte)
	*bp = at.AppendAAD((*bp)[:0])
	typ, data, err := b.DumpsTypedWith(v, *bp)
	if cap(*bp) <= 4<<10 {
		aadScratch.Put(bp)
	}
	return typ, data, err
}

// aadScratch holds the buffers dumpWithAAD builds associated data in
// (names and ids, no secret).
var aadScratch = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// Open deserializes (and decrypts) a value stored at at.
func (c Codec) Open(ctx context.Context, at Location, typ string, data []byte) (any, error) {
	if c.bound == nil {
		return c.s.LoadsTyped(typ, data)
	}
	return c.open(ctx, at, typ, data, AAD(at))
}

// OpenBuf is Open building the associated data in *buf, which it reuses
// across calls: for loops that open many values.
func OpenBuf[L Location](ctx context.Context, c Codec, buf *[]byte, at L, typ string, data []byte) (any, error) {
	if c.bound == nil {
		return c.s.LoadsTyped(typ, data)
	}
	*buf = at.AppendAAD((*buf)[:0])
	if c.subjects == nil {
		return c.bound.LoadsTypedWith(typ, data, *buf)
	}
	return c.open(ctx, at, typ, data, *buf)
}

// Move returns a value stored at from as it must be stored at to: opened
// and sealed again when it is encrypted (its type tag has a cipher suffix),
// the same bytes otherwise (plaintext is not bound).
func (c Codec) Move(ctx context.Context, from, to Location, typ string, data []byte) (string, []byte, error) {
	return c.MoveFenced(ctx, from, to, typ, data, nil)
}

// MoveFenced is Move recording the sealing key in f (see SealFenced).
func (c Codec) MoveFenced(ctx context.Context, from, to Location, typ string, data []byte, f *Fence) (string, []byte, error) {
	if typ == serde.TypeEmpty || !strings.Contains(typ, "+") {
		return typ, data, nil
	}
	if c.subjects != nil {
		// A copy of a subject's value stays the subject's.
		if ft, ok := from.(threadLocation); ok {
			if tt, ok := to.(threadLocation); ok {
				s, err := c.subjects.ThreadSubject(ctx, ft.thread())
				if err != nil {
					return "", nil, err
				}
				if s != "" {
					if err := c.subjects.BindThreadTo(ctx, tt.thread(), s); err != nil {
						return "", nil, err
					}
				}
			}
		}
	}
	v, err := c.Open(ctx, from, typ, data)
	if err != nil {
		return "", nil, err
	}
	t, d, err := c.SealFenced(ctx, to, v, f)
	if err != nil {
		return "", nil, err
	}
	if d == nil {
		d = []byte{}
	}
	return t, d, nil
}

// Row is the re-encryption engine's view of a stored value at at; key
// identifies its row for the driver.
func (c Codec) Row(key []any, at Location, typ string, data []byte) rotate.Row {
	return rotate.Row{Key: key, Typ: typ, Data: data, AAD: AAD(at), At: at}
}

// valueSealer is what serde.Encrypted offers for key rotation.
type valueSealer interface {
	Reencrypt(typ string, data, aad []byte) (string, []byte, bool, error)
}

// CanReencrypt reports whether the codec's serializer encrypts, and so
// whether Reencrypt can do anything.
func (c Codec) CanReencrypt() bool {
	_, ok := c.s.(valueSealer)
	return ok
}

// Reencrypt implements rotate.Sealer: a value not sealed under the primary
// key of its subject (or of the master keyring, for values of no subject)
// is sealed again there, bound to the same location. A subject's values
// sealed under the master key before the subject had keys of its own move
// to the subject's key.
//
// A value of a subject that no key of the subject opens, but whose header
// names a key the subject's erasure destroyed (a data backup restored
// after the erasure, the subject readmitted since with new keys), fails
// wrapping keys.ErrSubjectErased, as the value of a subject still erased
// does: re-encryption leaves it and reseals every other row, where
// serde.ErrDecrypt (tampering) would stop the run.
func (c Codec) Reencrypt(ctx context.Context, r rotate.Row) (string, []byte, bool, error) {
	var s any = c.s
	subject := ""
	if at, ok := r.At.(Location); ok && c.subjects != nil {
		b, sub, err := c.boundFor(ctx, at, true)
		if err != nil {
			return r.Typ, r.Data, false, err
		}
		s, subject = b, sub
	}
	vs, ok := s.(valueSealer)
	if !ok {
		return r.Typ, r.Data, false, rotate.ErrNotEncrypted
	}
	typ, data, changed, err := vs.Reencrypt(r.Typ, r.Data, r.AAD)
	if subject != "" && errors.Is(err, serde.ErrDecrypt) {
		if id, ok := serde.SealedKeyID(r.Typ, r.Data); ok {
			if gone, gerr := c.subjects.ErasedKey(ctx, subject, id); gerr == nil && gone {
				return r.Typ, r.Data, false, fmt.Errorf("%w: sealed under data key %s of %q, which its erasure destroyed", keys.ErrSubjectErased, id, subject)
			}
		}
	}
	return typ, data, changed, err
}
