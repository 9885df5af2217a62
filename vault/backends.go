package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Backends outside the core module.
//
// The core module must not depend on the MongoDB or Redis clients, so
// their backends live in modules of their own and reach vault.Open
// through this seam: a wiring package of the backend's module
// (github.com/memvault/memvault/backends/mongodb/mongovault,
// …/backends/redis/redisvault) calls RegisterBackend from its init for
// the URL schemes it serves, and a program that imports it (the memvault
// CLI does) opens `MEMVAULT_DSN=mongodb://…` like any other database. A
// DSN with a scheme nobody registered (and that is not PostgreSQL's) is
// an error wrapping ErrBackendNotRegistered that names the package to
// import, never a PostgreSQL connection attempt.
//
// What such a backend cannot do is refused, never dropped: Open refuses
// per-subject keys (unless the backend drains writes for erasure,
// Backend.Subjects, and a key table apart is named) and the audit trail
// (ErrUnsupported, naming the feature); Census and
// DangerousCompact refuse with ErrUnsupported; a backend without a store
// yet opens with Handle.Store nil, and NeedStore says so (ErrNoStore).

// ErrBackendNotRegistered is wrapped by Open's error for a DSN whose
// scheme names a backend no imported package registered.
var ErrBackendNotRegistered = errors.New("vault: no backend registered for this DSN")

// ErrUnsupported is wrapped by the error of a feature the configured
// backend does not have (per-subject keys, the audit trail, the census,
// compaction): the message names the feature and the backend.
var ErrUnsupported = errors.New("vault: not supported by this backend")

// ErrNoStore is wrapped by NeedStore's error when the backend has no
// long-term memory store (Handle.Store is nil).
var ErrNoStore = errors.New("vault: this backend has no store")

// Backend is a backend served by a module outside the core, registered
// with RegisterBackend.
type Backend struct {
	// Name is Handle.Backend for its databases ("mongodb", "redis").
	Name string
	// Open connects to c.DSN and opens the checkpointer with o. It is
	// called after the configuration is validated and the features the
	// backend lacks are refused. With c.MustExist it must create nothing,
	// and fail with an error wrapping ErrNotFound (naming what is
	// missing) when the database was never set up.
	Open func(ctx context.Context, c config.Config, o BackendOptions) (*BackendConn, error)
	// Audit says the backend's connections (BackendConn) carry AuditMeta
	// and DatabaseID, so that the audit trail may be configured; its
	// table is then a SQLite file named by MEMVAULT_AUDIT_TABLE. Without
	// it the trail is refused (ErrUnsupported).
	Audit bool
	// Subjects says the backend's saver and store make an erasure wait
	// for the writes under way in every process (DrainWrites), so that
	// per-subject keys may be configured; their key table is then apart
	// from the data: MEMVAULT_KEY_DSN (a PostgreSQL database) or
	// MEMVAULT_KEY_TABLE (a SQLite file, for processes of one host).
	// Without it they are refused (ErrUnsupported).
	Subjects bool
}

// BackendOptions is what vault.Open hands a Backend's Open: what the
// configuration resolved to, so that every backend seals and keeps data
// under the same rules.
type BackendOptions struct {
	// Serde is the checkpointer's serializer (JSONPlus, or the encrypted
	// one of the configured mode).
	Serde serde.Serializer
	// Versions, Retention and RetentionSweepInterval are the
	// configuration's (config.Config); VersionsSet is false when the
	// configuration chose no version style (then the backend's default).
	Versions               checkpointer.VersionStyle
	VersionsSet            bool
	Retention              checkpointer.RetentionPolicy
	RetentionSweepInterval time.Duration
}

// StoreOptions is what a BackendConn's Store hook gets: the store's
// serializer (nil: plain JSON), its index (nil: no semantic search),
// expiry and cache size, as the SQLite and PostgreSQL stores get them.
type StoreOptions struct {
	Serde     serde.Serializer
	Index     *store.IndexConfig
	TTL       *store.TTLConfig
	CacheSize int
}

// BackendConn is an opened backend database.
type BackendConn struct {
	// Saver is the checkpointer.
	Saver checkpointer.Saver
	// Store opens the backend's long-term memory store. It is the one
	// hook for it: nil while the backend has none, and then
	// Handle.Store is nil and NeedStore fails with ErrNoStore. vault.Open
	// may call it twice (a second time with the embedder the store's
	// vectors were made with).
	Store func(ctx context.Context, o StoreOptions) (store.Store, error)
	// Migrations reports what the backend set up (Handle.Migrations), such
	// as MongoDB's indexes; nil reports nothing.
	Migrations func(ctx context.Context) ([]Migration, error)
	// AuditMeta and DatabaseID bind an audit trail to this database
	// (Backend.Audit): the mark that its hash chain began, which makes
	// every later Open record (ErrAuditRequired), and the database's id,
	// created once, which the trail's records name. AuditMeta must only
	// read when asked whether the chain began.
	AuditMeta  audit.Meta
	DatabaseID func(ctx context.Context) (string, error)
	// ErasureLock, when set, is the database's erasure lock (see
	// ErasureLock); nil: the backend has none, and an Open finishes every
	// erasure intent not done, a live Forget's included, and Forgets
	// claim their intents concurrently.
	ErasureLock ErasureLock
	// Close releases the connection; the Saver and a store it opened are
	// closed first.
	Close func() error
}

// ErasureLock is a registered backend's erasure lock, the counterpart of
// PostgreSQL's session advisory lock and SQLite's lock file: a Forget
// holds it from before it claims its erasure intent until the intent is
// marked done, and it must die with its holder (a lease that expires
// unless renewed), so that an Open leaves a live Forget's intent to it,
// the next Open after its holder died finishes the intent, and Forgets
// claim in turn. Each key table of the database has its own lock, named
// by key.
type ErasureLock interface {
	// TryLock takes the lock named key when it is free: ok is false while
	// another holder has it. It does not wait: vault tries again, and
	// bounds the wait (ForgetOptions.LockWait).
	TryLock(ctx context.Context, key string) (held HeldErasureLock, ok bool, err error)
}

// HeldErasureLock is an ErasureLock taken.
type HeldErasureLock interface {
	// Check fails when the lock was lost since it was taken (a lease that
	// expired and was taken by another holder, or one the backend could
	// not renew): the Forget then stops before its next step rather than
	// run beside an Open that took the lock.
	Check(ctx context.Context) error
	// Release gives the lock up; later calls do nothing.
	Release()
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// RegisterBackend makes Open serve DSNs of scheme ("mongodb", the part
// before "://", case-insensitive) with b. A backend module's wiring
// package calls it from its init; registering a scheme twice, one of
// PostgreSQL's, or an incomplete Backend panics, as that is a program
// error found on the first run.
func RegisterBackend(scheme string, b Backend) {
	scheme = strings.ToLower(scheme)
	if b.Name == "" || b.Open == nil || scheme == "" {
		panic("vault: RegisterBackend: a scheme, a Name and an Open are needed")
	}
	if slices.Contains(postgresSchemes, scheme) {
		panic("vault: RegisterBackend: " + scheme + " is PostgreSQL's")
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[scheme]; dup {
		panic("vault: RegisterBackend: scheme " + scheme + " registered twice")
	}
	backends[scheme] = b
}

// postgresSchemes are the URL schemes pgx reads; a DSN without "://" is a
// PostgreSQL keyword/value string ("host=… dbname=…").
var postgresSchemes = []string{"postgres", "postgresql"}

// knownSchemes name the package that serves a scheme memvault has a
// backend for, for the error of a program that did not import it.
var knownSchemes = map[string]string{
	"mongodb":       "github.com/memvault/memvault/backends/mongodb/mongovault",
	"mongodb+srv":   "github.com/memvault/memvault/backends/mongodb/mongovault",
	"redis":         "github.com/memvault/memvault/backends/redis/redisvault",
	"rediss":        "github.com/memvault/memvault/backends/redis/redisvault",
	"redis+cluster": "github.com/memvault/memvault/backends/redis/redisvault",
}

// DSNScheme returns the lower-case URL scheme of dsn ("" for a PostgreSQL
// keyword/value string or no DSN).
func DSNScheme(dsn string) string {
	scheme, _, ok := strings.Cut(strings.TrimSpace(dsn), "://")
	if !ok || strings.ContainsAny(scheme, " =") {
		return ""
	}
	return strings.ToLower(scheme)
}

// backendFor returns the registered backend of dsn's scheme; ok is false
// for PostgreSQL's DSNs. A scheme that is neither is an error.
func backendFor(dsn string) (Backend, bool, error) {
	scheme := DSNScheme(dsn)
	if scheme == "" || slices.Contains(postgresSchemes, scheme) {
		return Backend{}, false, nil
	}
	backendsMu.RLock()
	b, ok := backends[scheme]
	backendsMu.RUnlock()
	if ok {
		return b, true, nil
	}
	if pkg := knownSchemes[scheme]; pkg != "" {
		return Backend{}, false, fmt.Errorf("%w: MEMVAULT_DSN scheme %q: import %s (the memvault CLI does)", ErrBackendNotRegistered, scheme, pkg)
	}
	return Backend{}, false, fmt.Errorf("%w: MEMVAULT_DSN scheme %q: want postgres:// (or a keyword/value string), mongodb:// or redis://", ErrBackendNotRegistered, scheme)
}

// refuseUnsupported refuses what a registered backend cannot do, before
// anything is opened: per-subject keys need erasure's write fence (a
// backend without Subjects) and a key table the backend cannot hold (one
// apart must be named), the audit trail a table and the data database's
// chain mark; settings only the SQL savers have are refused, not ignored.
func refuseUnsupported(c config.Config, b Backend) error {
	name := b.Name
	if c.SubjectsOn() && !b.Subjects {
		return fmt.Errorf("%w: per-subject keys (MEMVAULT_SUBJECT_THREAD_SEPARATOR, MEMVAULT_SUBJECT_THREAD_METADATA, MEMVAULT_SUBJECT_NAMESPACE) need a key table, which the %s backend does not have yet: use SQLite or PostgreSQL, or unset them", ErrUnsupported, name)
	}
	if c.SubjectsOn() && c.KeyDSN == "" && c.KeyTable == "" {
		return fmt.Errorf("%w: per-subject keys on the %s backend keep their key table apart from the data: set MEMVAULT_KEY_DSN (a PostgreSQL database every process reaches) or MEMVAULT_KEY_TABLE (a SQLite file, for processes of one host)", ErrUnsupported, name)
	}
	if c.Audit && !b.Audit {
		return fmt.Errorf("%w: the audit trail (MEMVAULT_AUDIT) needs an audit table, which the %s backend does not have yet: use SQLite or PostgreSQL, or unset it", ErrUnsupported, name)
	}
	if c.Audit && c.AuditTable == "" {
		return fmt.Errorf("%w: the audit trail on the %s backend lives in a SQLite file apart from the data: set MEMVAULT_AUDIT_TABLE to its path", ErrUnsupported, name)
	}
	// Settings of the SQL savers are refused rather than ignored: a
	// careless operator who turned them on believes they hold.
	if c.GroupCommit != 0 {
		return fmt.Errorf("%w: group commit (MEMVAULT_GROUP_COMMIT) is a SQLite and PostgreSQL saver setting; the %s backend commits each write alone: unset it", ErrUnsupported, name)
	}
	if c.SQLiteFullSync {
		return fmt.Errorf("%w: MEMVAULT_SQLITE_FULL_SYNC is a SQLite setting; the %s backend's durability is its server's: unset it", ErrUnsupported, name)
	}
	return nil
}

// openRegistered opens a registered backend's saver, and its store when
// it has one, into h.
func openRegistered(ctx context.Context, c config.Config, h *Handle, b Backend) error {
	h.Backend = b.Name
	if err := refuseUnsupported(c, b); err != nil {
		return err
	}
	if c.MustExist {
		if err := registeredMustExist(c); err != nil {
			return err
		}
	}
	// The key hierarchy, when on, is the serializer the backend gets.
	if err := openKeys(ctx, c, h, nil); err != nil {
		return err
	}
	conn, err := b.Open(ctx, c, BackendOptions{Serde: h.Serde, Versions: c.Versions, VersionsSet: c.VersionsSet,
		Retention: c.Retention, RetentionSweepInterval: c.RetentionSweepInterval})
	if err != nil {
		return err
	}
	if conn == nil || conn.Saver == nil {
		if conn != nil && conn.Close != nil {
			_ = conn.Close()
		}
		return fmt.Errorf("vault: the %s backend opened no saver", b.Name)
	}
	if conn.Close != nil {
		h.closers = append(h.closers, conn.Close)
	}
	if cl, ok := conn.Saver.(interface{ Close() error }); ok {
		h.closers = append(h.closers, cl.Close) // stops its sweeper before the connection closes
	}
	h.Saver, h.external = conn.Saver, conn
	if conn.Store == nil {
		return nil
	}
	cache := c.CacheSize
	if cache == 0 {
		cache = -1
	}
	return openStore(c, h, func() (store.Store, error) {
		return conn.Store(ctx, StoreOptions{Serde: h.StoreSerde, Index: indexConfig(c, h.Embedder, h.shared), TTL: ttlConfig(c), CacheSize: cache})
	})
}

// NeedStore returns nil when the handle has a store, else an error
// wrapping ErrNoStore that names the backend.
func (h *Handle) NeedStore() error {
	if h.Store != nil {
		return nil
	}
	return fmt.Errorf("%w: the %s backend has a checkpointer but no long-term memory store", ErrNoStore, h.Backend)
}

// unsupported is ErrUnsupported about feature on this handle's backend.
func (h *Handle) unsupported(feature string) error {
	return fmt.Errorf("%w: %s on the %s backend", ErrUnsupported, feature, h.Backend)
}

// checkExternalKeys is checkValueKeys for a registered backend, whose
// values vault cannot read without its client: it decodes one stored
// checkpoint — the latest of the thread the saver's SampleConfig names
// where it has one (MongoDB: the first document found), else of the first
// thread it lists (Redis: its thread index) — and refuses to go on
// (ErrKeyNotLoaded) when its values are sealed under a key no loaded key
// opens, or sealed while no key is loaded. A value of an erased data
// subject proves nothing either way (erasedThread).
//
// allowPlaintext is checkValueKeys's: without it a plaintext value read
// with a key loaded (serde.ErrPlaintextRefused) is ErrPlaintextData.
func (h *Handle) checkExternalKeys(ctx context.Context, _ bool) error {
	// The threads to read a value of, the first one first: MongoDB's by
	// index seek (SampleConfig), Redis's from its thread index.
	next := func(context.Context, string) (*checkpointer.Config, error) { return nil, nil }
	if s, ok := h.Saver.(interface {
		SampleConfig(ctx context.Context, after string) (*checkpointer.Config, error)
	}); ok {
		next = s.SampleConfig
	} else if lister, ok := h.Saver.(checkpointer.ThreadLister); ok {
		var threads []string
		for th, err := range lister.ListThreads(ctx) {
			if err != nil {
				return fmt.Errorf("vault: read the key of a stored value: %w", err)
			}
			if threads = append(threads, th.ThreadID); len(threads) == maxProbes {
				break
			}
		}
		next = func(_ context.Context, after string) (*checkpointer.Config, error) {
			i := 0
			if after != "" {
				i = slices.Index(threads, after) + 1
			}
			if i <= 0 && after != "" || i >= len(threads) {
				return nil, nil
			}
			return &checkpointer.Config{ThreadID: threads[i]}, nil
		}
	}
	// A value of an erased subject proves nothing of the key (erasedThread):
	// the next thread's is read, up to maxProbes.
	after := ""
	for range maxProbes {
		sample, err := next(ctx, after)
		if err != nil {
			return fmt.Errorf("vault: read the key of a stored value: %w", err)
		}
		if sample == nil {
			break
		}
		_, err = h.Saver.GetTuple(ctx, *sample)
		if err != nil && h.erasedThread(ctx, sample.ThreadID) {
			after = sample.ThreadID
			continue
		}
		if err := h.classifyProbe(err); err != nil {
			return err
		}
		break
	}
	return h.checkExternalStoreKey(ctx)
}

// maxProbes bounds the threads checkExternalKeys reads a value of.
const maxProbes = 16

// erasedThread reports whether thread belongs to a data subject whose
// erasure has begun: its values decrypt under no key — as erasure means,
// until a Forget (killed after destroying the keys, or an intent Open
// finished) deletes them — and say nothing of the loaded key. Refusing the
// Open for them would refuse that Forget too.
func (h *Handle) erasedThread(ctx context.Context, thread string) bool {
	if h.Keys == nil {
		return false
	}
	subject, err := h.Keys.ThreadSubject(ctx, thread)
	if err != nil || subject == "" {
		return false
	}
	return h.erasedSubject(ctx, subject)
}

// erasedSubject reports whether subject's erasure has begun.
func (h *Handle) erasedSubject(ctx context.Context, subject string) bool {
	e, err := h.Keys.Erasure(ctx, subject)
	return err == nil && e != nil && !e.Readmitted
}

// checkExternalStoreKey opens one memory of the store, as
// checkExternalKeys opens one checkpoint: a database holding only sealed
// memories opened without their key would otherwise fail every read and
// write new memories in plaintext beside them.
func (h *Handle) checkExternalStoreKey(ctx context.Context) error {
	if h.Store == nil {
		return nil
	}
	nss, err := h.Store.ListNamespaces(ctx, store.ListNamespacesOptions{Limit: 1})
	if err != nil || len(nss) == 0 {
		return h.classifyProbe(err)
	}
	_, err = h.Store.Search(ctx, nss[0], store.SearchOptions{Limit: 1})
	if err != nil && h.Keys != nil {
		if subject := h.Keys.NamespaceSubject(strings.Join(nss[0], ".")); subject != "" && h.erasedSubject(ctx, subject) {
			err = nil
		}
	}
	return h.classifyProbe(err)
}

// classifyProbe turns the error of reading a stored value at Open into
// ErrKeyNotLoaded when it says the value is sealed under a key the handle
// does not hold.
func (h *Handle) classifyProbe(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, crypto.ErrDecrypt):
		return h.keyNotLoaded("its values are encrypted", "")
	case errors.Is(err, serde.ErrPlaintextRefused):
		// Only a strict configuration refuses plaintext: one that allows
		// it (the migration mode) reads it.
		return plaintextData()
	case h.Keyring == nil && (errors.Is(err, serde.ErrUnknownType) || errors.Is(err, envelope.ErrMalformed)):
		// Without a key a sealed value's envelope is one the store
		// cannot read: "value is json+mvgcm and the store has no
		// serializer".
		return h.keyNotLoaded("its values are encrypted", "")
	}
	return fmt.Errorf("vault: read the key of a stored value: %w", err)
}
