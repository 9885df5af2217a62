package keys

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/internal/aead"
	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/internal/keyaccess"
	"github.com/memvault/memvault/serde"
)

// DefaultCacheSize is how many subjects' unwrapped keys a Hierarchy keeps
// in memory when Options.CacheSize is 0.
const DefaultCacheSize = 1024

// DefaultCacheTTL is how long a Hierarchy keeps a subject's unwrapped keys
// when Options.CacheTTL is 0: the longest another process goes on
// decrypting a subject's values after the subject's keys were destroyed.
const DefaultCacheTTL = time.Minute

// auditInfo is the HKDF label of the audit key, which authenticates
// erasure receipts (and the audit trail).
const auditInfo = "memvault/audit/v1"

// Options configures a Hierarchy.
type Options struct {
	// Master seals the values that belong to no subject, and its keys open
	// a subject's values sealed before the subject had keys of its own
	// (until `keys reencrypt` moves them). It must write memvault's
	// envelope: LangGraph's "aes" format binds nothing. Required.
	Master *serde.Encrypted
	// Table keeps the wrapped data keys. Required.
	Table Table
	// Providers hold the KEKs: the first wraps new data keys, every one
	// unwraps the keys it wrapped. nil means EnvProviders of Master's
	// keyring (the environment's master keys).
	Providers []Provider
	// Subjects says whose data each value is. The zero value assigns
	// none: everything is sealed under the master key, as without a
	// Hierarchy.
	Subjects Subjects
	// CacheSize bounds the subjects whose keys stay unwrapped in memory;
	// 0 means DefaultCacheSize.
	CacheSize int
	// CacheTTL bounds how long they stay: another process's Forget takes
	// effect here within it. 0 means DefaultCacheTTL.
	CacheTTL time.Duration
	// Now is the clock of key creation and receipts; nil means time.Now.
	Now func() time.Time
}

// Hierarchy seals each subject's values under the subject's own data keys.
// It is a serde.BoundSerializer (for values of no subject, which Master
// seals) that memvault's savers and stores ask for the serializer of each
// subject (SubjectSerializer). It is safe for concurrent use, also by
// several processes sharing the key table.
type Hierarchy struct {
	opts      Options
	providers map[string]Provider
	cache     *expirable.LRU[string, *subjectKeys]
	threads   *expirable.LRU[string, string] // thread → bound subject (metadata mode)
	unbound   *expirable.LRU[string, bool]   // threads found unbound, briefly (metadata mode)
	bindings  ThreadTable                    // nil unless Subjects.ThreadMetadataKey is set
	create    sync.Mutex                     // one key creation at a time in this process
	auditKeys [][]byte                       // per master key, the primary's first: it signs, all verify
	guard     atomic.Pointer[guardState]     // the data database's erasures (SetErasureGuard); nil: none
	erased    sync.Map                       // subject → []string: key ids its erasures destroyed, as last read (ErasedKey)
}

var _ serde.BoundSerializer = (*Hierarchy)(nil)

// String names the hierarchy without its keys (it holds the audit keys):
// every fmt verb prints this.
func (h *Hierarchy) String() string {
	return fmt.Sprintf("keys.Hierarchy(master %s, %d providers)", h.opts.Master.Keyring().Primary().ID(), len(h.opts.Providers))
}

// GoString is String, for %#v.
func (h *Hierarchy) GoString() string { return h.String() }

// Format prints String for every verb, so that %+v and %v cannot reach the
// audit keys inside.
func (h *Hierarchy) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(h.String())) }

// New returns the Hierarchy of opts.
func New(opts Options) (*Hierarchy, error) {
	if opts.Master == nil || opts.Table == nil {
		return nil, errors.New("keys: Options.Master and Options.Table are required")
	}
	if opts.Master.CipherName() != aead.EnvelopeName {
		return nil, fmt.Errorf("keys: the master serializer writes %q; per-subject keys need memvault's envelope (%q)", opts.Master.CipherName(), aead.EnvelopeName)
	}
	if err := opts.Subjects.Validate(); err != nil {
		return nil, err
	}
	if opts.CacheSize < 0 || opts.CacheTTL < 0 {
		return nil, fmt.Errorf("keys: negative CacheSize %d or CacheTTL %v", opts.CacheSize, opts.CacheTTL)
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Providers == nil {
		ps, err := EnvProviders(opts.Master.Keyring())
		if err != nil {
			return nil, err
		}
		opts.Providers = ps
	}
	if len(opts.Providers) == 0 {
		return nil, errors.New("keys: no Provider")
	}
	h := &Hierarchy{opts: opts, providers: map[string]Provider{}}
	for _, p := range opts.Providers {
		if _, dup := h.providers[p.KEKID()]; !dup {
			h.providers[p.KEKID()] = p
		}
	}
	h.cache = expirable.NewLRU[string, *subjectKeys](opts.CacheSize, nil, opts.CacheTTL)
	if opts.Subjects.ThreadMetadataKey != "" {
		if opts.Subjects.ThreadSeparator != "" {
			return nil, errors.New("keys: Subjects.ThreadSeparator and ThreadMetadataKey cannot both be set")
		}
		tt, ok := opts.Table.(ThreadTable)
		if !ok {
			return nil, fmt.Errorf("keys: Subjects.ThreadMetadataKey needs a key table that binds threads (keys.ThreadTable), not %T", opts.Table)
		}
		h.bindings = tt
		h.threads = expirable.NewLRU[string, string](16*opts.CacheSize, nil, opts.CacheTTL)
		h.unbound = expirable.NewLRU[string, bool](16*opts.CacheSize, nil, unboundTTL)
	}
	for _, k := range opts.Master.Keyring().Keys() {
		ak, err := DeriveAuditKey(k)
		if err != nil {
			return nil, err
		}
		h.auditKeys = append(h.auditKeys, ak)
	}
	return h, nil
}

// DeriveAuditKey derives from master the key that authenticates erasure
// receipts and chains the audit trail (HKDF-SHA256, a label of its own).
// The bytes are a secret: give them to audit.New and nowhere else.
func DeriveAuditKey(master *crypto.Key) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, master.Material(keyaccess.Token{}), nil, auditInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("keys: derive audit key: %w", err)
	}
	return k, nil
}

// CurrentKeyID is the id of the key that seals subject's values now: the
// master key's for "", else the subject's newest data key's, or "" when
// the subject's keys are not in the cache. It reads no table
// (SubjectKeyID does).
func (h *Hierarchy) CurrentKeyID(subject string) string {
	if subject == "" {
		return h.opts.Master.Keyring().Primary().ID().String()
	}
	if s, ok := h.cache.Peek(subject); ok {
		return s.ser.Keyring().Primary().ID().String()
	}
	return ""
}

// SubjectKeyID is CurrentKeyID reading the subject's keys on a cache
// miss (and keeping them in the cache, as SubjectSerializer does): the id
// of the master key for "", else of the subject's newest data key, or ""
// when the subject has none. With create set, a subject without keys gets
// its first one, as SubjectSerializer with seal: the audit trail asks so
// for a write's record, made before the write seals anything, so that the
// record of a subject's first write names the key the write seals under
// (before, CurrentKeyID left it blank: the key was made by the write).
func (h *Hierarchy) SubjectKeyID(ctx context.Context, subject string, create bool) (string, error) {
	if subject == "" {
		return h.opts.Master.Keyring().Primary().ID().String(), nil
	}
	sk, err := h.subjectKeys(ctx, subject, create)
	if err != nil || sk == nil {
		return "", err
	}
	return sk.ser.Keyring().Primary().ID().String(), nil
}

// Subjects returns how the Hierarchy resolves subjects.
func (h *Hierarchy) Subjects() Subjects { return h.opts.Subjects }

// DumpsTyped implements serde.Serializer for values of no subject.
func (h *Hierarchy) DumpsTyped(v any) (string, []byte, error) { return h.opts.Master.DumpsTyped(v) }

// LoadsTyped implements serde.Serializer for values of no subject.
func (h *Hierarchy) LoadsTyped(typ string, data []byte) (any, error) {
	return h.opts.Master.LoadsTyped(typ, data)
}

// DumpsTypedWith implements serde.BoundSerializer for values of no subject.
func (h *Hierarchy) DumpsTypedWith(v any, aad []byte) (string, []byte, error) {
	return h.opts.Master.DumpsTypedWith(v, aad)
}

// LoadsTypedWith implements serde.BoundSerializer for values of no subject.
func (h *Hierarchy) LoadsTypedWith(typ string, data, aad []byte) (any, error) {
	return h.opts.Master.LoadsTypedWith(typ, data, aad)
}

// ThreadSubject returns the subject of a thread ("" for none): its id's
// prefix, or (Subjects.ThreadMetadataKey) the subject it is bound to in the
// key table. Savers call it for every value they seal or open.
func (h *Hierarchy) ThreadSubject(ctx context.Context, thread string) (string, error) {
	if h.bindings == nil {
		return h.opts.Subjects.ThreadSubject(thread), nil
	}
	if s, ok := h.threads.Get(thread); ok {
		return s, nil
	}
	if _, ok := h.unbound.Get(thread); ok {
		return "", nil
	}
	s, err := h.bindings.BoundSubject(ctx, thread)
	if err != nil {
		return "", fmt.Errorf("keys: subject of %s: %w", idlimit.Name("thread", thread), err)
	}
	if s != "" {
		// Bindings never change (until the subject is forgotten).
		h.threads.Add(thread, s)
	} else {
		// Unbound is remembered briefly, so that reading one tuple does
		// not ask once per value; a value another process sealed since
		// under a new binding makes the caller evict it (EvictThread).
		h.unbound.Add(thread, true)
	}
	return s, nil
}

// ThreadKeySubject returns whose keys seal a thread's values: the thread's
// subject when subjects come from thread ids, and in metadata mode
// (Subjects.ThreadMetadataKey) the thread's own key set (ThreadKeyOwner),
// bound or not. An erasure of a subject destroys, with the subject's keys,
// the keys of every thread bound to it: so what a thread wrote before its
// user was known (anonymous, then a login) is erased with the user,
// backups taken before the login included, and binding moves no key.
// "" for none.
func (h *Hierarchy) ThreadKeySubject(ctx context.Context, thread string) (string, error) {
	if h.bindings == nil {
		return h.opts.Subjects.ThreadSubject(thread), nil
	}
	return ThreadKeyOwner(thread), nil
}

// threadKeyPrefix starts the owner of an unbound thread's keys in the key
// table; no subject may start with it.
const threadKeyPrefix = "memvault:thread:"

// ThreadKeyOwner is the key table's subject column for the keys of a
// thread not bound to a subject (metadata mode).
func ThreadKeyOwner(thread string) string { return threadKeyPrefix + thread }

// ThreadOfKeyOwner returns the thread whose own keys owner names, if it
// names one (see ThreadKeyOwner).
func ThreadOfKeyOwner(owner string) (string, bool) { return strings.CutPrefix(owner, threadKeyPrefix) }

// unboundTTL is how long a thread found unbound is taken as unbound.
const unboundTTL = 2 * time.Second

// EvictThread forgets what is cached of thread's binding, and reports
// whether anything was.
func (h *Hierarchy) EvictThread(thread string) bool {
	if h.bindings == nil {
		return false
	}
	a, b := h.threads.Remove(thread), h.unbound.Remove(thread)
	return a || b
}

// BindThread binds thread to the subject its checkpoint metadata names
// (Subjects.ThreadMetadataKey), before the checkpoint is sealed. A thread
// already bound to another subject is refused; metadata that names none
// binds nothing. Without a metadata key it does nothing.
func (h *Hierarchy) BindThread(ctx context.Context, thread string, md map[string]any) error {
	if h.bindings == nil {
		return nil
	}
	v, ok := md[h.opts.Subjects.ThreadMetadataKey]
	if !ok || v == nil {
		return nil
	}
	subject, ok := v.(string)
	if !ok || subject == "" {
		return fmt.Errorf("keys: metadata %q of %s is %T, not a subject (%s)", h.opts.Subjects.ThreadMetadataKey, idlimit.Name("thread", thread), v, idlimit.Name("value", fmt.Sprint(v)))
	}
	return h.BindThreadTo(ctx, thread, subject)
}

// BindThreadTo binds thread to subject (metadata mode; a copy of a bound
// thread is bound to the same subject). A thread bound to another subject
// is refused. Without a metadata key threads are their id's prefix's: it
// binds nothing, and refuses a thread whose id names another subject, or
// none (ErrSubjectMismatch) — a copy of subject's values sealed there
// would be under keys subject's erasure does not destroy.
func (h *Hierarchy) BindThreadTo(ctx context.Context, thread, subject string) error {
	if h.bindings == nil {
		if owner := h.opts.Subjects.ThreadSubject(thread); owner != subject {
			return fmt.Errorf("%w: %s names %s in its id, not %s: its values would outlive that subject's erasure", ErrSubjectMismatch, idlimit.Name("thread", thread), idlimit.Name("subject", owner), idlimit.Name("subject", subject))
		}
		return nil
	}
	if err := h.opts.Subjects.CheckSubject(subject); err != nil {
		return err
	}
	if s, ok := h.threads.Get(thread); ok && s == subject {
		return nil
	}
	h.unbound.Remove(thread)
	bound, err := h.bindings.BindThread(ctx, thread, subject)
	if err != nil {
		return fmt.Errorf("keys: bind %s: %w", idlimit.Name("thread", thread), err)
	}
	if bound != subject {
		return fmt.Errorf("%w: %s belongs to %s; its metadata now names %s", ErrSubjectMismatch, idlimit.Name("thread", thread), idlimit.Name("subject", bound), idlimit.Name("subject", subject))
	}
	h.threads.Add(thread, bound)
	return nil
}

// FollowThread records, in metadata mode (Subjects.ThreadMetadataKey),
// that thread is a copy of source, before the copy writes anything: an
// erasure of the subject source is bound to — when the copy is made or
// later, by a checkpoint naming the user in any process — then reaches the
// copy (and copies of it) too, destroying its own keys and deleting its
// rows (ThreadTable.FollowThread). A copy of a thread of an erased subject
// is refused (ErrSubjectErased), and so, before anything is recorded, is a
// copy onto a thread bound to another subject than source's
// (ErrSubjectMismatch). Without a metadata key it does nothing:
// threads are their id's prefix's.
func (h *Hierarchy) FollowThread(ctx context.Context, thread, source string) error {
	if h.bindings == nil || thread == source {
		return nil
	}
	// A copy the saver would refuse (a thread bound to another subject
	// than its source's: ErrSubjectMismatch, nothing stored) is refused
	// before it is recorded: left behind, the record would make the
	// source subject's erasure reach, and delete, the other subject's
	// thread, which holds nothing of the source's.
	srcSubject, err := h.ThreadSubject(ctx, source)
	if err != nil {
		return err
	}
	if srcSubject != "" {
		dstSubject, err := h.ThreadSubject(ctx, thread)
		if err != nil {
			return err
		}
		if dstSubject != "" && dstSubject != srcSubject {
			return fmt.Errorf("%w: %s belongs to %s, a copy of %s of %s", ErrSubjectMismatch, idlimit.Name("thread", thread), idlimit.Name("subject", dstSubject), idlimit.Name("thread", source), idlimit.Name("subject", srcSubject))
		}
	}
	if err := h.bindings.FollowThread(ctx, thread, source); err != nil {
		if errors.Is(err, ErrSubjectErased) {
			return err
		}
		return fmt.Errorf("keys: copy of %s to %s: %w", idlimit.Name("thread", source), idlimit.Name("thread", thread), err)
	}
	return nil
}

// checkOwner checks a key owner: a subject, or (metadata mode) a thread's
// own key set.
func (h *Hierarchy) checkOwner(owner string) error {
	if th, ok := ThreadOfKeyOwner(owner); ok && h.bindings != nil {
		if th == "" || !utf8.ValidString(th) || strings.ContainsRune(th, 0) {
			return fmt.Errorf("keys: %s is not NUL-free UTF-8", idlimit.Name("thread", th))
		}
		return nil
	}
	return h.opts.Subjects.CheckSubject(owner)
}

// SubjectThreads returns the threads an erasure of subject reaches in
// metadata mode: those bound to it, and every copy made of one of them
// (FollowThread), transitively, whoever it is bound to since. nil
// otherwise: threads are then found by their id's prefix.
func (h *Hierarchy) SubjectThreads(ctx context.Context, subject string) ([]string, error) {
	if h.bindings == nil {
		return nil, nil
	}
	ths, err := h.bindings.SubjectThreads(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("keys: threads of %s: %w", idlimit.Name("subject", subject), err)
	}
	return ths, nil
}

// UnbindThreads deletes the bindings of subject's threads (after Forget
// deleted the threads).
func (h *Hierarchy) UnbindThreads(ctx context.Context, subject string) error {
	if h.bindings == nil {
		return nil
	}
	ths, err := h.SubjectThreads(ctx, subject)
	if err != nil {
		return err
	}
	if err := h.bindings.UnbindThreads(ctx, subject); err != nil {
		return fmt.Errorf("keys: unbind threads of %s: %w", idlimit.Name("subject", subject), err)
	}
	for _, th := range ths {
		h.threads.Remove(th)
	}
	return nil
}

// NamespaceSubject returns the subject of a store namespace (dotted text;
// "" for none); stores call it for every value they seal or open.
func (h *Hierarchy) NamespaceSubject(ns string) string {
	return h.opts.Subjects.NamespaceSubject(ns)
}

// SubjectSerializer returns the serializer of subject's values: it seals
// under the subject's newest data key and opens with any of its keys (and
// the master keys, for values sealed before the subject had keys). With
// seal set, a subject without keys gets its first one; otherwise such a
// subject reads with the master keys only. A subject's keys stay unwrapped
// in a bounded cache.
func (h *Hierarchy) SubjectSerializer(ctx context.Context, subject string, seal bool) (serde.BoundSerializer, error) {
	sk, err := h.subjectKeys(ctx, subject, seal)
	if err != nil {
		return nil, err
	}
	if sk == nil {
		// Nothing of the subject was sealed under a data key here, or
		// its keys were destroyed: only master-key values can open.
		return h.opts.Master, nil
	}
	return sk.ser, nil
}

// SubjectRotation returns the secret rotation of subject's dims-dimension
// vectors: stores apply it to the subject's vectors (on top of whatever
// protects every vector, such as the master-keyed embedder) and to a
// search's query, so that the subject's vectors and the codes made from
// them mean nothing without the subject's keys.
//
// Its secret is derived (HKDF-SHA256, a label of its own) from the
// subject's data key of version 1, its first key, which lives exactly as
// long as the subject has keys and which no later key replaces:
// RotateSubject adds versions above the newest, and only the erasure
// removes keys, all of them at once. So the rotation stays the same, and
// once the keys are destroyed no copy of the vectors can be compared with
// anything the master key computes. With create set, a subject without
// keys gets its first one (as SubjectSerializer with seal); otherwise it
// has no rotation: nil, nil.
func (h *Hierarchy) SubjectRotation(ctx context.Context, subject string, dims int, create bool) (*embeddings.Rotation, error) {
	sk, err := h.subjectKeys(ctx, subject, create)
	if err != nil || sk == nil {
		return nil, err
	}
	if sk.vec == nil {
		// Not made by this package: every subject's keys start at 1.
		return nil, fmt.Errorf("keys: %s has no data key of version 1 to derive its vectors' rotation from", idlimit.Name("subject", subject))
	}
	return sk.rotation(dims)
}

// subjectKeys returns what the cache keeps of subject's keys, reading (and,
// with create, making) them on a miss; nil when the subject has no keys
// and create is false — a name that cannot be a subject (CheckSubject)
// included, which only a write refuses.
func (h *Hierarchy) subjectKeys(ctx context.Context, subject string, create bool) (*subjectKeys, error) {
	if s, ok := h.cache.Get(subject); ok {
		return s, nil
	}
	if err := h.checkOwner(subject); err != nil {
		if !create {
			// A name that cannot own keys (a label longer than a
			// subject may be, say) has none: a read or search under it
			// finds what the master keys sealed, or nothing, as for any
			// subject without keys, rather than failing.
			return nil, nil
		}
		return nil, err
	}
	if create {
		if err := h.guardRefresh(ctx); err != nil {
			return nil, err
		}
	}
	ks, err := h.opts.Table.Keys(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("keys: read keys of %s: %w", idlimit.Name("subject", subject), err)
	}
	if len(ks) == 0 {
		if !create {
			return nil, nil
		}
		if ks, err = h.createFirst(ctx, subject); err != nil {
			return nil, err
		}
	}
	s, err := h.keysOf(ctx, subject, ks)
	if err != nil {
		return nil, err
	}
	h.cache.Add(subject, s)
	return s, nil
}

// subjectKeys is what the cache keeps of a subject's keys.
type subjectKeys struct {
	ser *serde.Encrypted
	// vec is the secret of the subject's vector rotations (SealKeySize
	// bytes), derived from its key of version 1; nil when it has none.
	vec  []byte
	mu   sync.Mutex
	rots map[int]*embeddings.Rotation // by dimension count
}

// rotation returns the subject's rotation of dims-dimension vectors.
func (s *subjectKeys) rotation(dims int) (*embeddings.Rotation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rots[dims]; ok {
		return r, nil
	}
	r, err := embeddings.NewRotation(s.vec, dims)
	if err != nil {
		return nil, fmt.Errorf("keys: vector rotation: %w", err)
	}
	if s.rots == nil {
		s.rots = map[int]*embeddings.Rotation{}
	}
	s.rots[dims] = r
	return r, nil
}

// vectorInfo is the HKDF label of a subject's vector rotation secret.
const vectorInfo = "memvault/subject-vectors/v1"

// createFirst makes subject's first data key, or reads the one another
// process made first.
func (h *Hierarchy) createFirst(ctx context.Context, subject string) ([]WrappedKey, error) {
	h.create.Lock()
	defer h.create.Unlock()
	if ks, err := h.opts.Table.Keys(ctx, subject); err != nil || len(ks) > 0 {
		return ks, err
	}
	k, err := h.newKey(ctx, subject, 1)
	if err != nil {
		return nil, err
	}
	if err := h.opts.Table.Insert(ctx, k); err != nil && !errors.Is(err, ErrKeyExists) {
		return nil, fmt.Errorf("keys: store key of %s: %w", idlimit.Name("subject", subject), err)
	}
	return h.opts.Table.Keys(ctx, subject)
}

// newKey makes a random data key of subject, wrapped by the first provider.
func (h *Hierarchy) newKey(ctx context.Context, subject string, version int) (WrappedKey, error) {
	var dk [32]byte
	if _, err := rand.Read(dk[:]); err != nil {
		return WrappedKey{}, fmt.Errorf("keys: %w", err)
	}
	defer clear(dk[:])
	key, err := crypto.NewKey(dk[:])
	if err != nil {
		return WrappedKey{}, err
	}
	id := key.ID().String()
	p := h.opts.Providers[0]
	wrapped, err := p.Wrap(ctx, dk[:], wrapAD(subject, version, id))
	if err != nil {
		return WrappedKey{}, fmt.Errorf("keys: wrap key of %s: %w", idlimit.Name("subject", subject), err)
	}
	return WrappedKey{Subject: subject, Version: version, ID: id, KEK: p.KEKID(), Wrapped: wrapped, Created: h.opts.Now().UTC()}, nil
}

// wrapAD binds a wrapped key to its subject, version and id.
func wrapAD(subject string, version int, id string) []byte {
	out := []byte("memvault/data-key/v1\x00")
	for _, f := range []string{subject, fmt.Sprint(version), id} {
		out = binary.AppendUvarint(out, uint64(len(f)))
		out = append(out, f...)
	}
	return out
}

// keysOf unwraps ks (newest first) into subject's serializer and vector
// secret.
func (h *Hierarchy) keysOf(ctx context.Context, subject string, ks []WrappedKey) (*subjectKeys, error) {
	var (
		ring []*crypto.Key
		vec  []byte
	)
	for _, k := range ks {
		dk, err := h.unwrap(ctx, k)
		if err != nil {
			return nil, err
		}
		ring = append(ring, dk)
		// Version 1 is the key the subject keeps for as long as it has
		// keys (see SubjectRotation): its vectors' rotation must never
		// change.
		if k.Version == 1 {
			if vec, err = hkdf.Key(sha256.New, dk.Material(keyaccess.Token{}), nil, vectorInfo+"\x00"+subject, embeddings.SealKeySize); err != nil {
				return nil, fmt.Errorf("keys: derive vector key of %s: %w", idlimit.Name("subject", subject), err)
			}
		}
	}
	ring = append(ring, h.opts.Master.Keyring().Keys()...)
	kr, err := crypto.NewKeyring(ring[0], ring[1:]...)
	if err != nil {
		return nil, fmt.Errorf("keys: keyring of %s: %w", idlimit.Name("subject", subject), err)
	}
	ser, err := h.opts.Master.WithKeyring(kr)
	if err != nil {
		return nil, err
	}
	return &subjectKeys{ser: ser, vec: vec}, nil
}

// unwrapBytes returns k's key bytes, which the caller clears.
func (h *Hierarchy) unwrapBytes(ctx context.Context, k WrappedKey) ([]byte, error) {
	p, ok := h.providers[k.KEK]
	if !ok {
		return nil, fmt.Errorf("keys: key %d of %s is wrapped by %s, which no configured provider holds", k.Version, idlimit.Name("subject", k.Subject), idlimit.Name("KEK", k.KEK))
	}
	dk, err := p.Unwrap(ctx, k.Wrapped, wrapAD(k.Subject, k.Version, k.ID))
	if err != nil {
		return nil, fmt.Errorf("keys: key %d of %s: %w", k.Version, idlimit.Name("subject", k.Subject), ErrUnwrap)
	}
	return dk, nil
}

func (h *Hierarchy) unwrap(ctx context.Context, k WrappedKey) (*crypto.Key, error) {
	dk, err := h.unwrapBytes(ctx, k)
	if err != nil {
		return nil, err
	}
	defer clear(dk)
	key, err := crypto.NewKey(dk)
	if err != nil || key.ID().String() != k.ID {
		return nil, fmt.Errorf("keys: key %d of %s: %w", k.Version, idlimit.Name("subject", k.Subject), ErrUnwrap)
	}
	return key, nil
}

// Receipt is the record of an erasure: which subject's keys were
// destroyed, when, their ids and the rows deleted, authenticated (MAC)
// under the audit key derived from the master key, so it can be shown to an
// auditor and checked with VerifyReceipt. A pending receipt is of an
// erasure that is not finished: run it again.
type Receipt struct {
	Subject string `json:"subject"`
	// Time is when the erasure destroyed the keys (its first run).
	Time time.Time `json:"time"`
	// KeyIDs are the destroyed data keys' ids, over every run.
	KeyIDs []string `json:"key_ids"`
	// Threads and Items count the rows deleted, over every run.
	Threads int `json:"threads"`
	Items   int `json:"items"`
	// Pending is set while the erasure is not finished, with the reason
	// (e.g. a reader still holds a copy of a destroyed key); Finished is
	// when it finished.
	Pending       bool      `json:"pending,omitempty"`
	PendingReason string    `json:"pending_reason,omitempty"`
	Finished      time.Time `json:"finished,omitzero"`
	// MAC is HMAC-SHA256 over the fields above, in hex.
	MAC string `json:"mac"`
}

// mac computes the receipt's MAC; v1 receipts (before pending erasures)
// cover fewer fields and still verify.
func (r Receipt) mac(key []byte, v1 bool) string {
	m := hmac.New(sha256.New, key)
	fields := []string{"memvault/erasure-receipt/v1", r.Subject, r.Time.UTC().Format(time.RFC3339Nano),
		strings.Join(r.KeyIDs, ","), fmt.Sprint(r.Threads), fmt.Sprint(r.Items)}
	if !v1 {
		fields[0] = "memvault/erasure-receipt/v2"
		fields = append(fields, fmt.Sprint(r.Pending), r.PendingReason, r.Finished.UTC().Format(time.RFC3339Nano))
	}
	for _, f := range fields {
		m.Write(binary.AppendUvarint(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// SignReceipt sets r.MAC; call it after changing any field.
func (h *Hierarchy) SignReceipt(r *Receipt) { r.MAC = r.mac(h.auditKeys[0], false) }

// VerifyReceipt reports whether r is a receipt one of this Hierarchy's
// master keys (the primary or a previous one) authenticated, unchanged.
func (h *Hierarchy) VerifyReceipt(r Receipt) bool {
	for _, k := range h.auditKeys {
		if hmac.Equal([]byte(r.MAC), []byte(r.mac(k, false))) {
			return true
		}
		if !r.Pending && r.PendingReason == "" && r.Finished.IsZero() && hmac.Equal([]byte(r.MAC), []byte(r.mac(k, true))) {
			return true
		}
	}
	return false
}

// DestroyKeys destroys subject's data keys (StartErasure) and returns the
// receipt of the erasure so far, pending: it deletes no rows and does not
// purge. vault.Handle.Forget runs the whole erasure.
func (h *Hierarchy) DestroyKeys(ctx context.Context, subject string) (Receipt, error) {
	e, err := h.StartErasure(ctx, subject)
	if err != nil {
		return Receipt{}, err
	}
	return h.ErasureReceipt(e, "rows not deleted"), nil
}

// Evict drops subject's keys from the cache, so the next use reads them
// from the table again (after another process rotated them).
func (h *Hierarchy) Evict(subject string) { h.cache.Remove(subject) }

// RotateSubject gives subject a new data key, which seals from now on; its
// older keys still open what they sealed (`keys reencrypt` moves those
// values to the new key).
func (h *Hierarchy) RotateSubject(ctx context.Context, subject string) error {
	if err := h.opts.Subjects.CheckSubject(subject); err != nil {
		return err
	}
	h.create.Lock()
	defer h.create.Unlock()
	ks, err := h.opts.Table.Keys(ctx, subject)
	if err != nil {
		return fmt.Errorf("keys: read keys of %s: %w", idlimit.Name("subject", subject), err)
	}
	next := 1
	if len(ks) > 0 {
		next = ks[0].Version + 1
	}
	k, err := h.newKey(ctx, subject, next)
	if err != nil {
		return err
	}
	if err := h.opts.Table.Insert(ctx, k); err != nil {
		return fmt.Errorf("keys: store key of %s: %w", idlimit.Name("subject", subject), err)
	}
	h.cache.Remove(subject)
	return nil
}

// KEKRotation counts what RotateKEK did.
type KEKRotation struct {
	// Scanned keys, and Rewrapped those that were under another KEK.
	Scanned, Rewrapped int
}

// RotateKEK re-wraps every data key not wrapped by the first provider
// under it, in pages, and rewrites no data: values keep their data keys.
// It can be interrupted and run again; keys another process re-wrapped
// meanwhile are left alone. progress, when not nil, is called after each
// page. When done it compacts a key table that keeps images of rewritten
// rows (keys/sqlitekeys), so the previous KEK unwraps nothing in it any more.
func (h *Hierarchy) RotateKEK(ctx context.Context, progress func(KEKRotation)) (KEKRotation, error) {
	const page = 500
	to := h.opts.Providers[0]
	var st KEKRotation
	after, afterV := "", 0
	for {
		ks, err := h.opts.Table.Page(ctx, after, afterV, page)
		if err != nil {
			return st, fmt.Errorf("keys: rotate KEK: %w", err)
		}
		for _, k := range ks {
			st.Scanned++
			if k.KEK == to.KEKID() {
				continue
			}
			p, ok := h.providers[k.KEK]
			if !ok {
				return st, fmt.Errorf("keys: rotate KEK: key %d of %s is wrapped by %s, which no configured provider holds", k.Version, idlimit.Name("subject", k.Subject), idlimit.Name("KEK", k.KEK))
			}
			ad := wrapAD(k.Subject, k.Version, k.ID)
			dk, err := p.Unwrap(ctx, k.Wrapped, ad)
			if err != nil {
				return st, fmt.Errorf("keys: rotate KEK: key %d of %s: %w", k.Version, idlimit.Name("subject", k.Subject), ErrUnwrap)
			}
			wrapped, err := to.Wrap(ctx, dk, ad)
			clear(dk)
			if err != nil {
				return st, fmt.Errorf("keys: rotate KEK: wrap key %d of %s: %w", k.Version, idlimit.Name("subject", k.Subject), err)
			}
			done, err := h.opts.Table.Rewrap(ctx, k.Subject, k.Version, k.KEK, to.KEKID(), wrapped)
			if err != nil {
				return st, fmt.Errorf("keys: rotate KEK: %w", err)
			}
			if done {
				st.Rewrapped++
			}
		}
		if progress != nil {
			progress(st)
		}
		if len(ks) < page {
			return st, compactAfterRewrap(ctx, h.opts.Table)
		}
		after, afterV = ks[len(ks)-1].Subject, ks[len(ks)-1].Version
	}
}

// compacter is a Table whose storage keeps images of rows rewritten in
// place until it is compacted (keys/sqlitekeys: the old pages stay in the
// write-ahead log, and in the file until they are checkpointed).
type compacter interface {
	Compact(ctx context.Context) error
}

// compactAfterRewrap compacts t, if it needs it, when RotateKEK is done:
// until then its storage still holds the data keys as the previous KEK
// wrapped them, which that KEK — retired, perhaps because it leaked —
// still unwraps. It runs even when nothing was rewrapped, so running the
// rotation again finishes one whose compaction failed.
func compactAfterRewrap(ctx context.Context, t Table) error {
	c, ok := t.(compacter)
	if !ok {
		return nil
	}
	if err := c.Compact(ctx); err != nil {
		return fmt.Errorf("keys: rotate KEK: every data key is rewrapped, but the key table still holds them as the previous KEK wrapped them until it is compacted (run the rotation again once no other process is reading the key table; keep the previous KEK secret until then): %w", err)
	}
	return nil
}

// Reencrypt reseals a value of no subject under the master keyring's
// primary key (serde.Encrypted.Reencrypt); `keys reencrypt` reseals a
// subject's values with SubjectSerializer's serializer, through the
// savers' and stores' own re-encryption.
func (h *Hierarchy) Reencrypt(typ string, data, aad []byte) (string, []byte, bool, error) {
	return h.opts.Master.Reencrypt(typ, data, aad)
}
