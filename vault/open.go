package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// Handle is a wired saver and store on one database. Close it when done.
type Handle struct {
	// Backend is config.BackendSQLite, config.BackendPostgres, or the Name
	// of a backend registered with RegisterBackend ("mongodb", "redis").
	Backend string
	// Saver is the checkpointer.
	Saver checkpointer.Saver
	// Store is the long-term memory store (semantic search on when
	// embeddings are configured).
	Store store.Store
	// Serde is the checkpointer's value serializer.
	Serde serde.Serializer
	// StoreSerde is the store's value serializer: nil when encryption is
	// off (values are plain JSON), else the envelope — in every mode, also
	// LangGraph mode, since Python's store never reads encrypted values and
	// a store value must never be written unbound to its namespace and key.
	StoreSerde serde.Serializer
	// Keyring holds the encryption keys; nil when encryption is off.
	Keyring *crypto.Keyring
	// Embedder is the store's embedder; nil with MEMVAULT_EMBEDDINGS=none.
	// With encryption on it is keyed (hashing) or sealed (other models)
	// under the master key; see ProtectedEmbedder.
	Embedder embeddings.Embedder
	// Warnings are conditions Open worked around but the operator should
	// fix, such as store vectors made by the public embedder; the CLI
	// prints them on stderr.
	Warnings []string
	// Pool is the PostgreSQL pool (nil for SQLite), for callers that want
	// to run their own statements or use the …Tx methods.
	Pool *pgxpool.Pool
	// Keys is the key hierarchy when per-subject keys are on (then it is
	// also Serde and StoreSerde), nil otherwise.
	Keys *keys.Hierarchy
	// Audit is the audit trail when MEMVAULT_AUDIT is on (then Saver and
	// Store are audit.Saver and audit.Store), nil otherwise.
	Audit *audit.Trail

	closers []func() error
	// dsns are the configuration's connection strings, whose secrets
	// ScrubSecrets takes out of an error's message.
	dsns []string
	// finishedAtOpen are the subjects whose erasure Open finished from an
	// intent (finishIntent), for the audit trail once it is open.
	finishedAtOpen []string
	public         embeddings.Embedder // the configured model, unprotected
	target         embeddings.Embedder // what new vectors should be made with
	// shared: the store keeps data subjects' vectors in the shared space
	// (store.IndexConfig.DangerousSharedSubjectVectors), as its vectors
	// were made before subjects had spaces of their own.
	shared bool
	dbPath string // SQLite file
	schema string // PostgreSQL schema ("" = search_path)
	// external is the connection of a registered backend (RegisterBackend),
	// nil for SQLite and PostgreSQL.
	external *BackendConn
	// keyTableID is the id of the key table holding the subjects' keys
	// (keys.Identified); "" without per-subject keys or for a table
	// without an id (in memory).
	keyTableID string
	// keyTable is that table, nil when it has no id.
	keyTable keys.Identified
	// erasureMarks is the data database's record of the key table's
	// erasure count, nil when per-subject keys are off or the database
	// keeps no such record.
	erasureMarks erasureMarks
	// afterClaim, set by tests only, runs in ForgetWith once the erasure's
	// intent is recorded and before the key table's transaction: a Forget
	// paused (or killed) there.
	afterClaim func(intent int64)
	// erasureRefused is why ForgetWith refuses: the per-subject key marks
	// differ (pinSubjectKeys), which MEMVAULT_DANGEROUS_SKIP_KEY_CHECK let
	// Open through. nil otherwise.
	erasureRefused error
}

// Close releases the saver, the store and the database connections.
func (h *Handle) Close() error {
	var errs []error
	for i := len(h.closers) - 1; i >= 0; i-- {
		errs = append(errs, h.closers[i]())
	}
	h.closers = nil
	return errors.Join(errs...)
}

// KeyIDs returns the ids of the configured keys, primary first (never the
// keys themselves); nil when encryption is off.
func (h *Handle) KeyIDs() []string {
	if h.Keyring == nil {
		return nil
	}
	var ids []string
	for _, k := range h.Keyring.Keys() {
		ids = append(ids, k.ID().String())
	}
	return ids
}

// Reencrypt rewrites every stored value of the saver and the store that is
// not under the primary key (see checkpointer.Reencrypter), re-embeds the
// store's vectors when they were made under another key, and then, on
// SQLite, compacts the database file once (unless opt.DeferCompaction), so
// that no image of a rewritten row stays in it; a failure to compact wraps
// reencrypt.ErrCompactPending. PostgreSQL is not compacted here:
// DangerousCompact's VACUUM FULL locks each table.
func (h *Handle) Reencrypt(ctx context.Context, opt reencrypt.Options) (saver, st reencrypt.Stats, err error) {
	// opt.Progress follows the rows of both re-encryptions, as before.
	r, err := h.ReencryptSteps(ctx, opt, func(step string) func(done, total int64) {
		if step == StepReembed {
			return nil
		}
		return opt.Progress
	})
	return r.Saver, r.Store, err
}

// ReencryptReport is what ReencryptSteps did.
type ReencryptReport struct {
	// Saver and Store count the checkpoint values and writes, and the
	// memories, scanned and rewritten.
	Saver, Store reencrypt.Stats
	// Reembedded counts the vectors re-embedded (0 when they needed none,
	// and on a dry run).
	Reembedded int64
}

// The steps of ReencryptSteps, in order.
const (
	StepCheckpoints = "checkpoint values and writes"
	StepMemories    = "memories"
	StepReembed     = "re-embedding the store's vectors"
)

// ReencryptSteps is Reencrypt, telling step as each of its steps begins
// (StepCheckpoints, StepMemories, then StepReembed when the vectors need
// it and this is no dry run); the function step returns, when not nil,
// receives that step's progress (opt.Progress is ignored). A nil step
// reports nothing.
func (h *Handle) ReencryptSteps(ctx context.Context, opt reencrypt.Options, step func(name string) func(done, total int64)) (ReencryptReport, error) {
	var rep ReencryptReport
	if h.Keyring == nil {
		return rep, fmt.Errorf("vault: encryption is off (set LANGGRAPH_AES_KEY)")
	}
	begin := func(name string) func(done, total int64) {
		if step == nil {
			return nil
		}
		return step(name)
	}
	compact := !opt.DryRun && !opt.DeferCompaction
	// The saver, the store and the re-embedding rewrite one file: compact
	// it once, at the end.
	opt.DeferCompaction = true
	r, ok := h.Saver.(checkpointer.Reencrypter)
	if !ok {
		return rep, fmt.Errorf("vault: the %s saver cannot re-encrypt", h.Backend)
	}
	// A registered backend without a store yet (Store nil) has no
	// memories to re-encrypt; any store it has must re-encrypt.
	rs, ok := h.Store.(store.Reencrypter)
	if !ok && h.Store != nil {
		return rep, fmt.Errorf("vault: the %s store cannot re-encrypt", h.Backend)
	}
	var err error
	// Rows of erased subjects (a data backup restored after their
	// erasure) are left by each step, which then fails with
	// keys.ErrSubjectErased once every other row is resealed: the next
	// steps still run, and the error is returned at the end.
	var erased []error
	opt.Progress = begin(StepCheckpoints)
	if rep.Saver, err = r.Reencrypt(ctx, opt); errors.Is(err, keys.ErrSubjectErased) {
		erased = append(erased, err)
	} else if err != nil {
		return rep, err
	}
	if rs != nil {
		opt.Progress = begin(StepMemories)
		if rep.Store, err = rs.Reencrypt(ctx, opt); errors.Is(err, keys.ErrSubjectErased) {
			erased = append(erased, err)
		} else if err != nil {
			return rep, err
		}
	}
	if h.NeedsReembed() && !opt.DryRun {
		if rep.Reembedded, err = h.Reembed(ctx, store.ReembedOptions{BatchSize: opt.BatchSize, Progress: begin(StepReembed)}); err != nil {
			return rep, err
		}
	}
	if compact && h.Backend == config.BackendSQLite {
		if err := h.compactSQLite(ctx); err != nil {
			return rep, errors.Join(append(erased, fmt.Errorf("vault: %w: %w", reencrypt.ErrCompactPending, err))...)
		}
	}
	return rep, errors.Join(erased...)
}

// compactSQLite compacts the SQLite database file (sqlitedb.DB.Compact)
// through the handle the saver and the store share.
func (h *Handle) compactSQLite(ctx context.Context) error {
	db, err := sqlitedb.Open(h.dbPath, sqlitedb.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Compact(ctx)
}

// NeedsReembed reports whether the store's vectors were made by another
// embedder than the one new vectors are made with — the public embedder of
// a store older than vector protection, or the protected one under a
// previous key — or are data subjects' vectors still in the shared space,
// made before subjects had spaces of their own (see Warnings). Reembed
// fixes it.
func (h *Handle) NeedsReembed() bool {
	return h.Embedder != nil && h.target != nil && (h.Embedder.Name() != h.target.Name() || h.shared)
}

// Reembed recomputes the store's vectors with the embedder new vectors are
// made with (keyed or sealed under the primary key when encryption is on,
// each data subject's rotated into the subject's own space when per-subject
// keys are on) and records it; see store.Reembedder. Reencrypt calls it when the vectors
// are under another key. Reopen the handle afterwards: this one keeps
// querying with the embedder it opened with. Nothing to do returns 0.
func (h *Handle) Reembed(ctx context.Context, opt store.ReembedOptions) (int64, error) {
	if !h.NeedsReembed() {
		return 0, nil
	}
	r, ok := h.Store.(store.Reembedder)
	if !ok {
		return 0, fmt.Errorf("vault: the %s store cannot re-embed", h.Backend)
	}
	return r.Reembed(ctx, h.target, opt)
}

// ErrKeyNotConfigured is what Open returns, before touching any database,
// when LANGGRAPH_AES_KEY is set in the process environment but the
// configuration has no key and no explicit encryption mode: the program
// meant to encrypt (the key is there) but built its configuration without
// reading the environment (config.Default does not), and would write
// plaintext. Open with OpenEnv (or config.FromEnv), set Config.Keys, or
// set Config.Encryption to config.EncryptionOff to write plaintext on
// purpose.
var ErrKeyNotConfigured = errors.New("vault: LANGGRAPH_AES_KEY is set in the environment, but the configuration has no key")

// OpenEnv opens the configuration the process environment describes
// (config.FromEnv: MEMVAULT_DB or MEMVAULT_DSN, LANGGRAPH_AES_KEY, …): the
// shortest path, and the one that honours an exported key.
func OpenEnv(ctx context.Context) (*Handle, error) {
	c, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	return Open(ctx, c)
}

// Open connects to the configured database, creates or upgrades its
// tables, and returns the wired saver and store. With c.MustExist it
// creates no database: a missing one is an error wrapping ErrNotFound.
// It refuses (ErrKeyNotConfigured) a configuration without a key or an
// explicit encryption mode while LANGGRAPH_AES_KEY is exported.
func Open(ctx context.Context, c config.Config) (*Handle, error) {
	h, err := open(ctx, c)
	if h != nil {
		h.dsns = []string{c.DSN, c.KeyDSN}
	}
	// Drivers quote DSNs in their errors; none of their secrets may
	// reach a log or a terminal.
	return h, ScrubSecrets(err, c.DSN, c.KeyDSN)
}

// ScrubSecrets returns err with the secrets of the handle's DSNs (the
// database's and the key table's) taken out of its message, still wrapping
// err (see the package function ScrubSecrets): for an error of a saver,
// store or Forget call on its way to a web page, a log or a receipt.
func (h *Handle) ScrubSecrets(err error) error { return ScrubSecrets(err, h.dsns...) }

// open is Open, its errors not yet scrubbed of the DSNs' secrets.
func open(ctx context.Context, c config.Config) (*Handle, error) {
	if c.Encryption == "" && c.Keys.Primary == "" {
		if v, ok := os.LookupEnv("LANGGRAPH_AES_KEY"); ok && strings.TrimSpace(v) != "" {
			return nil, fmt.Errorf("%w: config.Default() reads no environment; open with vault.OpenEnv (or config.FromEnv()), set Config.Keys, or set Config.Encryption = config.EncryptionOff to write plaintext on purpose", ErrKeyNotConfigured)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// The DSN's scheme picks the backend before anything is built: a
	// mongodb:// or redis:// DSN must not reach pgx.
	ext, isExt, err := backendFor(c.DSN)
	if err != nil {
		return nil, err
	}
	ser, ring, err := c.SerializerKeyring()
	if err != nil {
		return nil, err
	}
	public, err := c.PublicEmbedder()
	if err != nil {
		return nil, err
	}
	emb, _, _, err := vectorEmbedder(c, public, ring, "", "")
	if err != nil {
		return nil, err
	}
	sser, err := c.StoreSerializer(ring)
	if err != nil {
		return nil, err
	}
	h := &Handle{Serde: ser, StoreSerde: sser, Keyring: ring, Embedder: emb, public: public, target: emb}
	ok := false
	defer func() {
		if !ok {
			_ = h.Close()
		}
	}()
	// With the audit trail on, the retention policy's background sweeps
	// run over the audited saver (startAuditedSweeper), so that their
	// deletions are recorded as `threads sweep`'s are; the inner saver gets
	// no sweeper of its own, which would delete unrecorded.
	// The store's TTL sweeps likewise (startAuditedSweeper). With a
	// durability mode other than sync, retention runs over the durable
	// saver too: a removal it does not see would fail the thread's next
	// queued put.
	inner := c
	if c.Audit || c.Durability != durable.Sync {
		inner.Retention = checkpointer.RetentionPolicy{}
	}
	if c.Audit {
		inner.TTL.SweepInterval = -1
	}
	switch {
	case isExt:
		err = openRegistered(ctx, inner, h, ext)
	case c.DSN != "":
		err = openPostgres(ctx, inner, h)
	default:
		err = openSQLite(ctx, inner, h)
	}
	if err != nil {
		return nil, err
	}
	if !c.DangerousSkipKeyCheck {
		// The key table's KEKs first: an external backend's value check
		// opens a value, which under a subject's key not unwrapped would
		// fail with the bare unwrap error.
		if err := h.checkKEKs(ctx); err != nil {
			return nil, err
		}
		check := h.checkValueKeys
		if isExt {
			check = h.checkExternalKeys
		}
		if err := check(ctx, c.DangerousAllowPlaintext); err != nil {
			return nil, err
		}
	}
	if err := requireKeyOnKeyedDatabase(ctx, c, h); err != nil {
		return nil, err
	}
	var dur *durable.Saver
	if c.Durability != durable.Sync {
		// Inside the audit trail: the trail records each call (in the
		// queued write's transaction when the saver records in its
		// transactions), not the batch the durable saver writes later.
		if dur, err = durable.New(h.Saver, durable.Options{Mode: c.Durability}); err != nil {
			return nil, err
		}
		h.Saver = dur
	}
	if err := requireAudit(ctx, c, h); err != nil {
		return nil, err
	}
	if err := requireSubjects(ctx, c, h); err != nil {
		return nil, err
	}
	if err := openAudit(ctx, c, h); err != nil {
		return nil, err
	}
	for _, subject := range h.finishedAtOpen {
		// The erasure the killed Forget recorded, as Forget records its
		// own (it logged before its intent; this says it was carried out).
		if err := h.log(ctx, audit.OpSubjectErase, subject, subject); err != nil {
			return nil, err
		}
	}
	if dur != nil {
		// Closed after the sweepers stop and before the trail flushes:
		// the queues are written, with the audit records they carry,
		// then chained. (On an error before this, the saver's own
		// closer runs: nothing was queued yet.)
		h.closers = append(h.closers, dur.Close)
	}
	if err := startAuditedSweeper(c, h); err != nil {
		return nil, err
	}
	ok = true
	return h, nil
}

// startAuditedSweeper starts the retention policy's background sweeper over
// the audited saver, and the TTL sweeper over the audited store, when the
// audit trail is on (see Open): every sweep that may delete is recorded
// before it runs. With a durability mode other than sync, the retention
// sweeper runs over the durable saver, which then sees its removals.
// Close stops them before the saver and store close.
func startAuditedSweeper(c config.Config, h *Handle) error {
	if c.Audit {
		if sw, ok := h.Store.(store.Sweeper); ok {
			stop := store.StartSweeper(c.TTL.SweepEvery(), sw.Sweep)
			h.closers = append(h.closers, func() error { stop(); return nil })
		}
	}
	if (!c.Audit && c.Durability == durable.Sync) || c.Retention.Empty() {
		return nil
	}
	sw, ok := h.Saver.(checkpointer.Sweeper)
	if !ok {
		return fmt.Errorf("vault: MEMVAULT_RETENTION_*: the %s saver cannot sweep", h.Backend)
	}
	if b := checkpointer.StartSweeper(c.Retention, c.RetentionSweepInterval, sw.Sweep, nil); b != nil {
		h.closers = append(h.closers, func() error { b.Stop(); return nil })
	}
	return nil
}

// sqliteMemory is the DBPath of a private in-memory SQLite database.
const sqliteMemory = ":memory:"

// DefaultAuditSchema is the PostgreSQL schema of the audit trail when
// MEMVAULT_AUDIT_TABLE is not set.
const DefaultAuditSchema = "memvault_audit"

// masterSubjects is audit.Subjects without per-subject keys: no subjects,
// every value under the master key.
type masterSubjects string

func (masterSubjects) ThreadSubject(context.Context, string) (string, error) { return "", nil }
func (masterSubjects) NamespaceSubject(string) string                        { return "" }
func (m masterSubjects) CurrentKeyID(string) string                          { return string(m) }

// ErrAuditRequired is what Open returns for a configuration that does not
// record (MEMVAULT_AUDIT off) on a database whose audit trail has begun: a
// process that did not record would leave operations out of the trail,
// and `audit verify` could not tell. Once a database has a trail, every
// process that opens it records, or none opens it.
var ErrAuditRequired = errors.New("vault: this database has an audit trail, and the configuration does not record")

// requireAudit refuses (ErrAuditRequired) a configuration without audit on
// a database whose data records that its trail's hash chain began.
func requireAudit(ctx context.Context, c config.Config, h *Handle) error {
	meta := auditMeta(c, h)
	if c.Audit || meta == nil {
		return nil
	}
	began, err := meta.ChainBegan(ctx)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if began {
		return fmt.Errorf("%w: set MEMVAULT_AUDIT=true (and MEMVAULT_AUDIT_TABLE to where the trail lives, when not the default), so that no operation goes unrecorded", ErrAuditRequired)
	}
	return nil
}

// ErrSubjectHoldsSeparator is what Forget returns for a subject that holds
// the thread separator (MEMVAULT_SUBJECT_THREAD_SEPARATOR) when subjects
// come from thread ids alone: a thread's subject is the part of its id
// before the first separator, so no thread is such a subject's ("tenant:42"
// names none: thread "tenant:42:refund" is subject "tenant"'s) and there is
// nothing to erase. Nothing is recorded.
var ErrSubjectHoldsSeparator = errors.New("vault: the subject holds the thread separator, so no thread is its")

// subjectOwnsNothing refuses (ErrSubjectHoldsSeparator) a subject that
// holds the thread separator when subjects come from thread ids alone: it
// owns no key, thread or item, and an erasure of it would report success
// while the user's threads, another subject's, stay readable. With
// namespace prefixes too, such a subject can own items (a label may hold
// the separator), so it is let through.
func subjectOwnsNothing(sub keys.Subjects, subject string) error {
	sep := sub.ThreadSeparator
	if sep == "" || len(sub.Prefixes()) > 0 || sub.CheckSubject(subject) != nil {
		return nil // a bad subject is refused, naming why, further on
	}
	owner, _, ok := strings.Cut(subject, sep)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: forget %q: a thread's subject is the part of its id before the first %q (MEMVAULT_SUBJECT_THREAD_SEPARATOR), "+
		"so a thread %q… is subject %q's, like every thread whose id starts %q, and sealed under its keys; nothing was erased. "+
		"Give each user a thread id prefix without the separator",
		ErrSubjectHoldsSeparator, subject, sep, subject+sep, owner, owner+sep)
}

// ErrSubjectsRequired is what Open returns for a configuration without
// per-subject keys on a database that has kept data subjects' values under
// their own keys: such a process would seal an erased subject's values
// under the master key, out of reach of the erasure's key destruction
// (a cron job, a second service, a shell where MEMVAULT_SUBJECT_* was not
// exported). Once a database has per-subject keys, every process that
// opens it has them, or none opens it; MEMVAULT_DANGEROUS_SKIP_KEY_CHECK
// opens it anyway.
var ErrSubjectsRequired = errors.New("vault: this database keeps data subjects' values under their own keys, and the configuration has no per-subject keys")

// ErrSubjectsChanged is what Open returns for a configuration whose
// per-subject keys differ from those the database's values were kept
// under: another subject mapping (MEMVAULT_SUBJECT_* — a process that does
// not see carol in ("users", "carol") seals her items under the master
// key, beyond her erasure) or another key table (MEMVAULT_KEY_TABLE or
// MEMVAULT_KEY_DSN naming a new, empty table, or a SQLite database opened
// through another path whose default key file is new: that table knows
// nothing of past erasures and makes erased subjects keys again).
// MEMVAULT_DANGEROUS_SKIP_KEY_CHECK opens it anyway; to change the mapping
// or move the keys on purpose, stop every process and delete the mark's
// row (subject_mapping or subject_key_table) from memvault_meta.
var ErrSubjectsChanged = errors.New("vault: this database keeps data subjects' values under another per-subject key configuration")

// The memvault_meta rows that record the per-subject keys configured on
// the database: that there were any, their mapping, and the key table.
const (
	subjectsMark        = "subject_keys"
	subjectMappingMark  = "subject_mapping"
	subjectKeyTableMark = "subject_key_table"
)

// dataMarks is what the data database's meta table offers besides
// audit.Meta (sqliteaudit.Meta, pgaudit.Meta): marks of what was
// configured on it. A mark is written once and never changed.
type dataMarks interface {
	Marked(ctx context.Context, name string) (bool, error)
	MarkValue(ctx context.Context, name string) (string, bool, error)
	Mark(ctx context.Context, name, value string) error
}

// erasureMarks are the data database's marks that only grow: the key
// table's count of erasures (keys.Identified.Erasures) it has seen.
// A count is read through MarkCount where the marks keep it as a
// number (MongoDB), else as MarkValue's text.
type erasureMarks interface {
	dataMarks
	AdvanceMark(ctx context.Context, name string, n int64) error
}

// markCount reads the count AdvanceMark keeps under name; 0 when there is
// none.
func markCount(ctx context.Context, marks erasureMarks, name string) (int64, error) {
	if c, ok := marks.(interface {
		MarkCount(ctx context.Context, name string) (int64, error)
	}); ok {
		return c.MarkCount(ctx, name)
	}
	v, ok, err := marks.MarkValue(ctx, name)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("mark %q holds %q, not a count", name, v)
	}
	return n, nil
}

// keyErasuresMark is the memvault_meta row holding the greatest count of
// erasures the key table reported to a process of the database.
const keyErasuresMark = "subject_key_erasures"

// checkKeyErasures refuses a key table that has started fewer erasures
// than the data database has seen it start — a copy or a backup of it
// made before an erasure, which still holds keys the erasure destroyed:
// a process on it would read and write an erased subject's values
// (ErrSubjectsChanged). The id pin cannot tell: a copy keeps the id. A
// table that counts more (an erasure whose process died before telling
// the database, or a database restored from an older backup) moves the
// mark up.
//
// With finish, it first finishes every erasure ForgetWith recorded the
// intent of and did not mark done (finishIntents): its Forget killed
// before the key transaction, or after it and the key table then restored
// from a backup taken before (which counts as many erasures as the
// database has seen, and holds the destroyed keys). Without it, such a
// backup gave the erased subject's values back.
func (h *Handle) checkKeyErasures(ctx context.Context, marks erasureMarks, finish bool) error {
	seen, have, err := erasureCounts(ctx, marks, h.keyTable)
	if err != nil {
		return err
	}
	if err := behindErasures(have, seen); err != nil {
		return err
	}
	if finish {
		var r intentReport
		if err := h.finishIntents(ctx, marks, false, &r); err != nil {
			return err
		}
		h.finishedAtOpen = append(h.finishedAtOpen, r.finished...)
		h.Warnings = append(h.Warnings, r.warnings...)
		if have, err = h.keyTable.Erasures(ctx); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	if have > seen {
		if err := marks.AdvanceMark(ctx, keyErasuresMark, have); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	return nil
}

// behindErasures refuses a key table that has started fewer erasures
// (have) than the database has seen: a copy or a backup of the key table
// taken before an erasure, which still holds keys it destroyed — or the
// live key table itself, when a copy of it, taken while no erasure had
// run since and used by another process, ran one first. Counts cannot
// tell the two apart (the copy carries the table's id and count), so the
// error names both: an operator told only "this is the copy" retires the
// live table and loses every subject created on it since the copy
// (TestDivergedKeyTablesRefusalNamesBoth).
func behindErasures(have, seen int64) error {
	if have >= seen {
		return nil
	}
	return fmt.Errorf("%w: the key table has started %d erasures and the database has seen %d. Either this key table "+
		"is a copy or a backup taken before an erasure, and still holds keys that erasure destroyed, or a copy of this "+
		"key table, used by another process, ran those erasures. Point every process at one key table, but before "+
		"retiring this one compare the two (`memvault keys census` on each): subjects created on it since the copy "+
		"exist nowhere else, and erased subjects' keys must be destroyed in the one kept (run forget there again). "+
		"Never copy a live key table: move it", ErrSubjectsChanged, have, seen)
}

// intentMarks are erasureMarks that list a range of marks (SQLite,
// PostgreSQL, MongoDB): where erasure intents are kept.
type intentMarks interface {
	erasureMarks
	MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error)
}

// Erasure intents. ForgetWith writes, before it destroys any key, the
// intent erasureIntentMark(n) = keys.Hierarchy.SignIntent(table id, n,
// subject): the subject's id (as the audit trail and the key table's
// erasure record keep it) under a MAC of the master key, so that no one
// with write access to the data database alone can have a process destroy
// a subject's keys. Once the keys are destroyed and the database's count
// moved, erasureDoneMark(n). Open finishes every intent not done (the
// keys of a subject the key table does not show erased are destroyed) and
// moves erasuresSettledMark past the intents all done, so that it reads
// only those after. Numbers are fixed-width, so the marks sort by number.
const (
	intentPrefix        = "erasure_intent_"
	intentBelow         = "erasure_intent_:" // ':' follows the digits
	doneBelow           = "erasure_done_:"
	erasuresSettledMark = "erasure_intents_settled"
)

func erasureIntentMark(n int64) string { return fmt.Sprintf("%s%020d", intentPrefix, n) }
func erasureDoneMark(n int64) string   { return fmt.Sprintf("erasure_done_%020d", n) }

// maxIntents bounds the intents one Open reads, and the numbers one claim
// tries: more erasures begun at once and not finished are left to the
// next Open.
const maxIntents = 1000

// intentReport is what finishIntents did that its caller reports: the
// subjects whose erasure it finished (each one an audit record) and the
// warnings (Handle.Warnings at Open).
type intentReport struct {
	finished, warnings []string
}

// finishIntents finishes the erasures recorded as intents and not done,
// past the settled mark: an intent this key did not sign (forged, moved,
// or written by a build before intents were signed) is left alone, with a
// warning that names its row. It moves the settled mark past every
// intent before the first one it could not finish.
//
// With held, the caller holds the erasure lock (forgetLock): a Forget,
// before it claims, finishes those of Forgets killed before it.
func (h *Handle) finishIntents(ctx context.Context, marks erasureMarks, held bool, r *intentReport) error {
	im, ok := marks.(intentMarks)
	if !ok {
		return nil
	}
	settled, err := markCount(ctx, marks, erasuresSettledMark)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	rows, err := im.MarksBetween(ctx, erasureIntentMark(settled), intentBelow, maxIntents)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	if l := h.forgetLock(); l != nil && !held {
		// Held by a live Forget from before its claim until its intent
		// is done: an intent not done may be its own, which it finishes
		// (finishing it here too recorded a second erasure, and warned
		// of a Forget that had not finished). Left, settled mark and
		// all, to an Open that finds the lock free; read the done marks
		// once it is held, after the Forgets before it marked theirs.
		held, ok, err := l.tryLock(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if held != nil {
			defer held.release()
		}
	}
	// The done marks of the same numbers, in one read (not one per intent):
	// at most one per intent row, up to the last one's number.
	last, err := strconv.ParseInt(strings.TrimPrefix(rows[len(rows)-1][0], intentPrefix), 10, 64)
	below := doneBelow
	if err == nil && last > 0 && last < math.MaxInt64 {
		below = erasureDoneMark(last + 1)
	}
	doneRows, err := im.MarksBetween(ctx, erasureDoneMark(settled), below, len(rows))
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	done := make(map[string]bool, len(doneRows))
	for _, d := range doneRows {
		done[d[0]] = true
	}
	through, blocked := settled, false // blocked: an intent left undone; the mark stops before it
	for _, row := range rows {
		n, err := strconv.ParseInt(strings.TrimPrefix(row[0], intentPrefix), 10, 64)
		if err != nil || n <= 0 || erasureIntentMark(n) != row[0] {
			// Not a number memvault writes: never a bound for the mark.
			r.warnings = append(r.warnings, fmt.Sprintf("memvault_meta row %q is not an erasure intent memvault wrote: left alone", row[0]))
			continue
		}
		if !done[erasureDoneMark(n)] {
			subject, prior, ok := h.Keys.OpenIntent(h.keyTableID, n, row[1])
			if !ok {
				// Signed by another key, perhaps the right one (this
				// process may hold a wrong or a newer master key): left
				// for a process that can verify it, the mark held here.
				r.warnings = append(r.warnings, fmt.Sprintf("memvault_meta row %q is not an erasure intent this key signed (forged, copied from "+
					"another database, signed under another master key, or written by a memvault before intents were signed): left alone; "+
					"if an erasure was killed, run `memvault forget` for its subject again", row[0]))
				blocked = true
				continue
			}
			if err := h.finishIntent(ctx, marks, n, subject, prior, r); err != nil {
				return err
			}
		}
		if !blocked {
			through = n
		}
	}
	// Not past the key table's count: an intent numbered beyond it may be
	// one a Forget is still writing (and a row forged far ahead must not
	// move later intents past what the erasure guard compares them with).
	have, err := h.keyTable.Erasures(ctx)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if through = min(through, have); through > settled {
		if err := marks.AdvanceMark(ctx, erasuresSettledMark, through); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	return nil
}

// finishIntent destroys, in the key table, the keys of the subject of
// intent n unless the table shows the erasure the intent asked for begun,
// and marks the intent done. prior is the subject's erasure record as the
// claim saw it (keys.ErasureStamp): the erasure asked for has begun when
// the table holds a record other than that one, or that one not
// readmitted. So an old intent never erases a subject readmitted since.
func (h *Handle) finishIntent(ctx context.Context, marks erasureMarks, n int64, subject, prior string, r *intentReport) error {
	e, err := h.Keys.Erasure(ctx, subject)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if e == nil || (e.Readmitted && keys.ErasureStamp(e) == prior) {
		// An intent recorded before the guard's record existed.
		if err := markErasure(ctx, marks, subject, n); err != nil {
			return err
		}
		if _, err := h.Keys.StartErasure(ctx, subject); err != nil {
			return fmt.Errorf("vault: finish the erasure of %q the key table does not record (a Forget killed, or the key table restored from a backup): %w", subject, err)
		}
		have, err := h.keyTable.Erasures(ctx)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		if err := marks.AdvanceMark(ctx, keyErasuresMark, have); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		r.finished = append(r.finished, subject)
		r.warnings = append(r.warnings, fmt.Sprintf("destroyed the keys of data subject %q, whose erasure a Forget recorded and did not finish: "+
			"its threads and items stay, unreadable, until `memvault forget` runs for it again", subject))
	}
	if err := marks.Mark(ctx, erasureDoneMark(n), "1"); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

// erasureCounts reads the count of erasures the database has seen and the
// count the key table has started. The database's first: a Forget moves
// the table's count before the database's, so read in the other order a
// Forget running between the two reads made the rightful table look like
// a backup.
func erasureCounts(ctx context.Context, marks erasureMarks, t keys.Identified) (seen, have int64, err error) {
	if seen, err = markCount(ctx, marks, keyErasuresMark); err != nil {
		return 0, 0, fmt.Errorf("vault: %w", err)
	}
	if have, err = t.Erasures(ctx); err != nil {
		return 0, 0, fmt.Errorf("vault: %w", err)
	}
	return seen, have, nil
}

// claimErasure records the intent to erase subject (see
// erasureIntentMark) under the first number past the counts and the
// settled intents that no other erasure claimed, and returns it: of two
// Forgets claiming at once the first write wins the number and the other
// takes the next. A number the settled mark passed meanwhile (an Open
// would not read it) is given up for a later one.
func (h *Handle) claimErasure(ctx context.Context, subject string) (int64, error) {
	marks := h.erasureMarks
	seen, have, err := erasureCounts(ctx, marks, h.keyTable)
	if err != nil {
		return 0, err
	}
	// Checked again here, not only at Open: a process that opened before
	// another's erasure, on a copy of the key table, would otherwise
	// count an erasure of its own up to the database's record and pass
	// the guard again (TestReviewS25CopyCatchesUpByForgetting).
	if err := behindErasures(have, seen); err != nil {
		return 0, fmt.Errorf("vault: forget %q refused: %w", subject, err)
	}
	settled, err := markCount(ctx, marks, erasuresSettledMark)
	if err != nil {
		return 0, fmt.Errorf("vault: %w", err)
	}
	prior, err := h.Keys.Erasure(ctx, subject)
	if err != nil {
		return 0, fmt.Errorf("vault: %w", err)
	}
	start := max(seen, have, settled)
	if start < 0 || start > math.MaxInt64-2*maxIntents {
		return 0, fmt.Errorf("vault: record the erasure of %q: the erasure counts (%d, %d, settled %d) are out of range: "+
			"memvault_meta holds a count it did not write", subject, seen, have, settled)
	}
	for n, tries := start+1, 0; tries < maxIntents; n, tries = n+1, tries+1 {
		name, value := erasureIntentMark(n), h.Keys.SignIntent(h.keyTableID, n, subject, keys.ErasureStamp(prior))
		if err := marks.Mark(ctx, name, value); err != nil {
			return 0, fmt.Errorf("vault: %w", err)
		}
		got, ok, err := marks.MarkValue(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("vault: %w", err)
		}
		if !ok || got != value {
			if err := h.passable(ctx, marks, n, got); err != nil {
				return 0, fmt.Errorf("vault: record the erasure of %q: %w", subject, err)
			}
			continue
		}
		if settled, err = markCount(ctx, marks, erasuresSettledMark); err != nil {
			return 0, fmt.Errorf("vault: %w", err)
		} else if settled < n {
			// The guard's record: from now on a process on a copy of
			// the key table cannot write the subject's values. It is the
			// count of erasures the key table will have once this one
			// is counted, which the guard compares with writers' counts:
			// have+1 where Forgets hold the erasure lock (forgetLock) and
			// killed ones' intents were finished first, so no other
			// erasure is counted in between — an intent number skipped
			// (a row this key did not sign, left alone) must not put the
			// record past the count, refusing the subject's writes after
			// a Readmit (TestReviewS25IntentGapRefusesReadmittedSubject).
			// Without the lock (a backend without one, SQLite without
			// flock(2)) Forgets claim concurrently and n, past every
			// claim before it, is the bound.
			guardAt := n
			if h.forgetLock() != nil {
				guardAt = have + 1
			}
			return n, markErasure(ctx, marks, subject, guardAt)
		}
	}
	return 0, fmt.Errorf("vault: record the erasure of %q: %d erasures begun at once", subject, maxIntents)
}

// passable is nil when claimErasure may pass over intent n, whose row
// holds value (another claim's): the row is done, this key opens it (a
// concurrent Forget's, where Forgets hold no lock), or it is not an intent
// at all (a row planted in memvault_meta, which must not stop an
// erasure). An intent signed under a master key this process does not
// hold, and not done, is refused: its Forget may have counted its erasure
// in the key table before it was killed, and this process, unable to
// finish it, would count its own erasure in its place — a process on a
// copy of the key table, behind by that erasure, would then count as many
// as the database's guard records and write the erased subject again
// (TestReviewS25bCopySkipsIntentItCannotVerify).
func (h *Handle) passable(ctx context.Context, marks erasureMarks, n int64, value string) error {
	if !keys.LooksLikeIntent(value) {
		return nil
	}
	if _, _, ok := h.Keys.OpenIntent(h.keyTableID, n, value); ok {
		return nil
	}
	_, done, err := marks.MarkValue(ctx, erasureDoneMark(n))
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if done {
		return nil
	}
	return fmt.Errorf("memvault_meta row %q is an erasure intent signed under a master key this process does not hold, and not done: "+
		"open with that key (as LANGGRAPH_AES_KEY, or LANGGRAPH_AES_KEY_PREVIOUS during a rotation) to finish it, then forget again; "+
		"if no memvault wrote it, delete the row", erasureIntentMark(n))
}

// refuseUnprovenKeyTable refuses a key table not shown to be the one the
// data's values were sealed with, for a database that used per-subject
// keys before and has no key table pinned (a database marked before the
// pin existed, or whose pin was deleted): pinning another table (a
// mistyped MEMVAULT_KEY_TABLE or MEMVAULT_KEY_DSN, another application's)
// would make erased subjects keys again. The proof is a stored value
// sealed under a subject's key the table holds; the key census reads the
// values' key ids (SQLite and PostgreSQL). Where there is none to read — a
// backend without the census, or no subject's value left — the table must
// not be empty. The way out, for a table known to be the right one: pin
// its id by hand.
func refuseUnprovenKeyTable(ctx context.Context, marks dataMarks, h *Handle) error {
	if _, pinned, err := marks.MarkValue(ctx, subjectKeyTableMark); err != nil || pinned {
		return err
	}
	table, ok := h.keyTable.(keys.Table)
	if !ok {
		return nil
	}
	refuse := func(why string) error {
		return fmt.Errorf("%w: this database kept data subjects' values under per-subject keys and has no key table pinned, "+
			"and %s: it may not be the table the database used (a mistyped MEMVAULT_KEY_TABLE or MEMVAULT_KEY_DSN?); if it is, "+
			"insert the row (name %q, value %q) into the database's memvault_meta", ErrSubjectsChanged, why, subjectKeyTableMark, h.keyTableID)
	}
	sealed, err := subjectKeyIDs(ctx, h)
	if err != nil {
		return err
	}
	if len(sealed) == 0 {
		some, err := table.Page(ctx, "", 0, 1)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		erasures, err := h.keyTable.Erasures(ctx)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		if len(some) == 0 && erasures == 0 {
			return refuse("the key table given holds no key and has erased no one")
		}
		return nil
	}
	// A page at a time, up to the first key of a stored value.
	subject, version := "", 0
	for {
		page, err := table.Page(ctx, subject, version, 1000)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		for _, k := range page {
			if sealed[strings.ToLower(k.ID)] {
				return nil
			}
		}
		if len(page) < 1000 {
			return refuse("the key table given holds none of the keys its values are sealed under")
		}
		subject, version = page[len(page)-1].Subject, page[len(page)-1].Version
	}
}

// subjectKeyIDs returns the key ids the stored values are sealed under,
// the loaded (master) keys left out: those of subjects' data keys. It is
// empty where the backend has no key census.
func subjectKeyIDs(ctx context.Context, h *Handle) (map[string]bool, error) {
	if h.Backend != config.BackendSQLite && h.Backend != config.BackendPostgres {
		return nil, nil
	}
	rows, err := h.Census(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, r := range rows {
		if r.KeyID != "" && r.Role == "unknown" {
			ids[r.KeyID] = true
		}
	}
	return ids, nil
}

// subjectMapping is the canonical text of a subject mapping, as its mark
// holds it: the same for every spelling of the same mapping (prefixes in
// any order, NamespacePrefix or NamespacePrefixes).
func subjectMapping(s keys.Subjects) string {
	var prefixes [][]string
	for _, p := range append([][]string{s.NamespacePrefix}, s.NamespacePrefixes...) {
		if len(p) > 0 {
			prefixes = append(prefixes, p)
		}
	}
	slices.SortFunc(prefixes, slices.Compare)
	prefixes = slices.CompactFunc(prefixes, slices.Equal)
	b, _ := json.Marshal(struct {
		ThreadSeparator   string     `json:"thread_separator,omitempty"`
		ThreadMetadataKey string     `json:"thread_metadata_key,omitempty"`
		NamespacePrefixes [][]string `json:"namespace_prefixes,omitempty"`
	}{s.ThreadSeparator, s.ThreadMetadataKey, prefixes})
	return string(b)
}

// pinMark returns nil when the database's mark name holds want, marking it
// first when the database has none (the first process with per-subject
// keys, or a database marked before this mark existed), and
// ErrSubjectsChanged naming what differs otherwise. Of two processes
// marking at once, the first write wins and the other compares with it.
func pinMark(ctx context.Context, marks dataMarks, name, want, what string) error {
	got, ok, err := marks.MarkValue(ctx, name)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if !ok {
		if err := marks.Mark(ctx, name, want); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		if got, _, err = marks.MarkValue(ctx, name); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	if got != want {
		return fmt.Errorf("%w: its %s is %s, the configuration's %s (every process must open it with the same MEMVAULT_SUBJECT_* settings and key table)", ErrSubjectsChanged, what, got, want)
	}
	return nil
}

// requireSubjects marks a database opened with per-subject keys, and
// refuses (ErrSubjectsRequired) a configuration without them on a marked
// one. A backend whose meta table keeps no marks is not checked.
func requireSubjects(ctx context.Context, c config.Config, h *Handle) error {
	marks, ok := auditMeta(c, h).(dataMarks)
	if !ok || (!c.SubjectsOn() && c.DangerousSkipKeyCheck) {
		return nil
	}
	marked, err := marks.Marked(ctx, subjectsMark)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if !c.SubjectsOn() {
		if marked {
			return fmt.Errorf("%w: set MEMVAULT_SUBJECT_THREAD_SEPARATOR, MEMVAULT_SUBJECT_THREAD_METADATA or MEMVAULT_SUBJECT_NAMESPACE (and MEMVAULT_KEY_TABLE or MEMVAULT_KEY_DSN) as the processes that wrote it do", ErrSubjectsRequired)
		}
		return nil
	}
	if err := pinSubjectKeys(ctx, marks, h, c.Subjects, marked); err != nil {
		if !c.DangerousSkipKeyCheck {
			return err
		}
		// The flag opens anyway; an erasure here could not be recorded
		// against the erasures the database has seen (it would count in
		// another table, or a backup), so Forget is refused.
		h.erasureRefused = err
		h.Warnings = append(h.Warnings, "MEMVAULT_DANGEROUS_SKIP_KEY_CHECK opened a database whose per-subject key marks differ; forget is refused here: "+err.Error())
	}
	// Marked last: a process that finds the mark finds the pins too (one
	// opening the database at the same moment as the first, which found
	// the mark and not yet the key table's pin, took the key table for
	// an unproven one).
	if !marked {
		if err := marks.Mark(ctx, subjectsMark, "1"); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	}
	return nil
}

// pinSubjectKeys pins the subject mapping and the key table on the
// database, or checks them against the pins there (requireSubjects).
func pinSubjectKeys(ctx context.Context, marks dataMarks, h *Handle, subjects keys.Subjects, marked bool) error {
	if err := pinMark(ctx, marks, subjectMappingMark, subjectMapping(subjects), "subject mapping"); err != nil {
		return err
	}
	if h.keyTableID == "" {
		return nil
	}
	if marked {
		if err := refuseUnprovenKeyTable(ctx, marks, h); err != nil {
			return err
		}
	}
	if err := pinMark(ctx, marks, subjectKeyTableMark, h.keyTableID, "key table's id"); err != nil {
		return err
	}
	if em, ok := marks.(erasureMarks); ok {
		if err := h.checkKeyErasures(ctx, em, true); err != nil {
			return err
		}
		h.erasureMarks = em
		if err := setErasureGuard(ctx, em, h); err != nil {
			return err
		}
	}
	return nil
}

// openAudit opens the trail when the configuration asks for it, and wraps
// the saver and the store so that they record every operation.
func openAudit(ctx context.Context, c config.Config, h *Handle) error {
	if !c.Audit {
		return nil
	}
	var table audit.Table
	if h.Pool == nil && c.AuditTable == "" && c.DBPath == sqliteMemory {
		table = audit.NewMemoryTable()
	} else if h.Pool == nil {
		path := c.AuditTable
		if path == "" {
			path = c.DBPath + ".audit"
		}
		t, err := sqliteaudit.Open(ctx, path)
		if err != nil {
			return fmt.Errorf("vault: MEMVAULT_AUDIT_TABLE: %w", err)
		}
		h.closers = append(h.closers, t.Close)
		table = t
	} else {
		schema := c.AuditTable
		if schema == "" {
			schema = DefaultAuditSchema
		}
		t, err := pgaudit.New(h.Pool, pgaudit.Options{Schema: schema})
		if err != nil {
			return fmt.Errorf("vault: MEMVAULT_AUDIT_TABLE: %w", err)
		}
		if err := t.Setup(ctx); err != nil {
			return fmt.Errorf("vault: MEMVAULT_AUDIT_TABLE: %w", err)
		}
		table = t
	}
	// The trail's keys derive from LANGGRAPH_AES_KEY, which Validate
	// requires with MEMVAULT_AUDIT even when values are written in
	// plaintext (MEMVAULT_ENCRYPTION=off), where the handle has no keyring.
	ring := h.Keyring
	if ring == nil {
		r, err := c.Keyring()
		if err != nil {
			return fmt.Errorf("vault: MEMVAULT_AUDIT: %w", err)
		}
		if r == nil {
			return fmt.Errorf("vault: MEMVAULT_AUDIT needs LANGGRAPH_AES_KEY: %w", config.ErrMissingSetting)
		}
		ring = r
	}
	var ks [][]byte
	for _, k := range ring.Keys() {
		ak, err := keys.DeriveAuditKey(k)
		if err != nil {
			return err
		}
		ks = append(ks, ak)
	}
	dbID, err := auditDatabaseID(ctx, c, h)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	// A write records in its own transaction where the trail lives in
	// the data's database: PostgreSQL (the same pool), or a SQLite trail
	// in the data file itself (MEMVAULT_AUDIT_TABLE set to it).
	inTx := h.Pool != nil || (h.external == nil && c.AuditTable != "" && c.AuditTable == c.DBPath && c.DBPath != sqliteMemory)
	trail, err := audit.NewTrail(table, audit.Options{Key: ks[0], Previous: ks[1:], DatabaseID: dbID, Meta: auditMeta(c, h), WritesInTx: inTx})
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	// Records name the key that sealed the values: none when they are
	// written in plaintext (the trail's key seals nothing).
	sealing := ""
	if h.Keyring != nil {
		sealing = h.Keyring.Primary().ID().String()
	}
	var subjects audit.Subjects = masterSubjects(sealing)
	if h.Keys != nil {
		subjects = h.Keys
	}
	h.Audit = trail
	// Closers run last first: the records still pending are chained
	// before the database closes, so a clean shutdown leaves none.
	h.closers = append(h.closers, func() error { return trail.Flush(context.Background()) })
	h.Saver = audit.NewSaver(h.Saver, trail, subjects)
	h.Store = audit.NewStore(h.Store, trail, subjects)
	return nil
}

// auditDatabaseID is the id of the data database the trail is bound to:
// the SQLite data file's, or the PostgreSQL data schema's (created once);
// none for a private in-memory database, which no trail outlives.
func auditDatabaseID(ctx context.Context, c config.Config, h *Handle) (string, error) {
	switch {
	case h.external != nil:
		if h.external.DatabaseID == nil {
			return "", fmt.Errorf("%w: the audit trail on the %s backend (no database id)", ErrUnsupported, h.Backend)
		}
		return h.external.DatabaseID(ctx)
	case h.Pool != nil:
		return pgaudit.DatabaseID(ctx, h.Pool, h.schema)
	case c.DBPath != sqliteMemory:
		return sqliteaudit.DatabaseID(ctx, c.DBPath)
	}
	return "", nil
}

// auditMeta is where the data database records that the trail's hash
// chain began (nil for a private in-memory database).
func auditMeta(c config.Config, h *Handle) audit.Meta {
	switch {
	case h.external != nil:
		return h.external.AuditMeta // nil: the trail is refused at Open (refuseUnsupported)
	case h.Pool != nil:
		return pgaudit.Meta(h.Pool, h.schema)
	case c.DBPath != sqliteMemory:
		return sqliteaudit.Meta(c.DBPath)
	}
	return nil
}

// RotateKEK re-wraps every data key under the current KEK
// (keys.Hierarchy.RotateKEK), recorded in the audit trail when it is on.
func (h *Handle) RotateKEK(ctx context.Context, progress func(keys.KEKRotation)) (keys.KEKRotation, error) {
	if h.Keys == nil {
		return keys.KEKRotation{}, ErrNoSubjects
	}
	if err := h.log(ctx, audit.OpKEKRotate, "data keys", ""); err != nil {
		return keys.KEKRotation{}, err
	}
	return h.Keys.RotateKEK(ctx, progress)
}

// RotateSubject gives subject a new data key (keys.Hierarchy.RotateSubject),
// recorded in the audit trail when it is on.
func (h *Handle) RotateSubject(ctx context.Context, subject string) error {
	if h.Keys == nil {
		return ErrNoSubjects
	}
	if err := h.log(ctx, audit.OpSubjectRotate, subject, subject); err != nil {
		return err
	}
	return h.Keys.RotateSubject(ctx, subject)
}

// Readmit lets an erased subject have data keys again
// (keys.Hierarchy.Readmit), recorded in the audit trail when it is on.
// Until then every write of the subject fails with keys.ErrSubjectErased.
func (h *Handle) Readmit(ctx context.Context, subject string) error {
	if h.Keys == nil {
		return ErrNoSubjects
	}
	if err := h.log(ctx, audit.OpSubjectReadmit, subject, subject); err != nil {
		return err
	}
	return h.Keys.Readmit(ctx, subject)
}

// log records an operation when the audit trail is on.
func (h *Handle) log(ctx context.Context, op, target, subject string) error {
	if h.Audit == nil {
		return nil
	}
	return h.Audit.Log(ctx, op, target, subject, "")
}

// DefaultKeySchema is the PostgreSQL schema of the key table when
// MEMVAULT_KEY_TABLE is not set.
const DefaultKeySchema = "memvault_keys"

// openKeys builds the key hierarchy on the key table the configuration
// names (SQLite: a file; PostgreSQL: a schema on pool), when per-subject
// keys are on; h.Serde and h.StoreSerde become the hierarchy.
func openKeys(ctx context.Context, c config.Config, h *Handle, pool *pgxpool.Pool) error {
	if !c.SubjectsOn() {
		return nil
	}
	master, ok := h.Serde.(*serde.Encrypted)
	if !ok {
		return fmt.Errorf("vault: per-subject keys need envelope encryption")
	}
	var table keys.Table
	// Errors name the setting the operator must look at: with a key DSN
	// the table's schema lives in that database, and a failure to reach
	// it is the DSN's (redacted), not the table name's.
	setting := "MEMVAULT_KEY_TABLE"
	if c.KeyDSN != "" {
		setting = "MEMVAULT_KEY_DSN (" + RedactDSN(c.KeyDSN) + ")"
	}
	if c.KeyDSN != "" {
		kp, err := pgxpool.New(ctx, c.KeyDSN)
		if err != nil {
			return fmt.Errorf("vault: MEMVAULT_KEY_DSN: %w", err)
		}
		h.closers = append(h.closers, func() error { kp.Close(); return nil })
		pool = kp
	} else if pool != nil {
		// The key table gets connections of its own even in the data's
		// database: a copy of a thread seals its values inside the data
		// transaction, and sealing may read or create keys; on the data
		// pool, as many copies at once as it has connections each held
		// one and waited for ever for another (session 33,
		// TestConcurrentCopiesOnPostgreSQL: 8 copies on a pool of 4).
		kp, err := pgxpool.NewWithConfig(ctx, pool.Config())
		if err != nil {
			return fmt.Errorf("vault: %s: %w", setting, err)
		}
		h.closers = append(h.closers, func() error { kp.Close(); return nil })
		pool = kp
	}
	if pool == nil && c.KeyTable == "" && c.DBPath == sqliteMemory {
		// A private in-memory database: its keys die with it too.
		table = memkeys.New()
	} else if pool == nil {
		path := c.KeyTable
		if path == "" {
			path = c.DBPath + ".keys"
		}
		t, err := sqlitekeys.Open(ctx, path)
		if err != nil {
			return fmt.Errorf("vault: MEMVAULT_KEY_TABLE: %w", err)
		}
		h.closers = append(h.closers, t.Close)
		table = t
	} else {
		schema := c.KeyTable
		if schema == "" {
			schema = DefaultKeySchema
		}
		if c.MustExist {
			if err := pgMustExist(ctx, pool, "key table", "MEMVAULT_KEY_TABLE", schema, "memvault_keys_migrations"); err != nil {
				return err
			}
		}
		t, err := pgkeys.New(pool, pgkeys.Options{Schema: schema, ApartFromData: c.KeyDSN != "" && c.DSN != c.KeyDSN})
		if err != nil {
			return fmt.Errorf("vault: %s: %w", setting, err)
		}
		if err := t.Setup(ctx); err != nil {
			return fmt.Errorf("vault: %s: %w", setting, err)
		}
		table = t
	}
	if id, ok := table.(keys.Identified); ok {
		tableID, err := id.TableID(ctx)
		if err != nil {
			return fmt.Errorf("vault: %s: %w", setting, err)
		}
		h.keyTableID, h.keyTable = tableID, id
	}
	hier, err := keys.New(keys.Options{Master: master, Table: table, Subjects: c.Subjects, Providers: c.KEKProviders})
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	h.Keys, h.Serde, h.StoreSerde = hier, hier, hier
	return nil
}

// deleteThreads deletes threads in one set-based operation when the saver
// prunes (every memvault saver does), one by one otherwise.
func deleteThreads(ctx context.Context, s checkpointer.Saver, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if p, ok := s.(checkpointer.Pruner); ok {
		return p.Prune(ctx, ids, checkpointer.PruneDelete)
	}
	for _, id := range ids {
		if err := s.DeleteThread(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoSubjects is returned by Forget when per-subject keys are off.
var ErrNoSubjects = errors.New("vault: per-subject keys are off (set MEMVAULT_SUBJECT_THREAD_SEPARATOR or MEMVAULT_SUBJECT_NAMESPACE)")

// ForgetOptions configures Handle.ForgetWith. The zero value is usable.
type ForgetOptions struct {
	// Wait bounds how long the erasure waits for readers that may still
	// hold a copy of the destroyed keys (keys.PurgeOptions.Wait): 0 means
	// keys.DefaultPurgeWait, negative not to wait. Writes that began
	// before the keys were destroyed are given at least 10 s to finish
	// whatever Wait says: rows are deleted only after them.
	Wait time.Duration
	// Progress, when set, is told what the erasure waits for.
	Progress func(msg string)
	// LockWait bounds how long the erasure waits for the database's
	// erasure lock while another Forget holds it: 0 means
	// DefaultForgetLockWait, negative not to wait. A deadline of ctx that
	// comes first ends the wait too. Past it the Forget fails with an
	// error wrapping ErrErasureLocked, having claimed and changed nothing.
	LockWait time.Duration
	// RefuseEmpty makes the erasure of a subject that owns nothing here —
	// no data key, no erasure begun, no thread, no memory — fail with
	// ErrNothingToForget before anything is recorded: a mistyped subject
	// (carlo for carol) is then an error, not a receipt that reads like
	// an erasure while carol's data stays. The CLI sets it unless
	// --allow-empty. A rerun of a begun or killed erasure always runs.
	RefuseEmpty bool
}

// ErrNothingToForget is what ForgetWith returns, with
// ForgetOptions.RefuseEmpty, for a subject that owns nothing here: no data
// key, no erasure begun, no thread and no memory. Nothing was recorded.
var ErrNothingToForget = errors.New("vault: the subject owns nothing here")

// Forget is ForgetWith with the default options.
func (h *Handle) Forget(ctx context.Context, subject string) (keys.Receipt, error) {
	return h.ForgetWith(ctx, subject, ForgetOptions{})
}

// ForgetWith erases a data subject, in an order that a crash, a reader or
// a writer in another process cannot break:
//
//  1. It records the erasure in the key table and destroys the subject's
//     data keys, in one transaction (keys.Hierarchy.StartErasure): from
//     then on every value sealed under them fails to decrypt, here and in
//     any copy of the data, and every write sealed under them fails with
//     keys.ErrSubjectErased (writers check their key inside their own
//     transaction: a write either commits before the keys are destroyed or
//     stores nothing). No new key is made for the subject until the
//     erasure finishes.
//  2. It waits for writes that found the keys live to commit
//     (PostgreSQL's fence makes the keys' deletion wait for them; SQLite
//     takes the write lock once), then deletes the subject's threads (every
//     thread whose id names the subject, or that was ever bound to it) and
//     items (every namespace that names it).
//  3. It makes sure no copy of the destroyed keys stays in the key table's
//     storage (keys.ErasureTable.Purge), waiting up to opt.Wait for
//     readers that still hold one.
//  4. It marks the erasure done and returns its receipt, authenticated
//     under the audit key, with every key and row of every run.
//
// If step 3 cannot finish in time, it returns the receipt marked pending
// and an error wrapping keys.ErrErasurePending that says what holds a
// copy; if anything fails, it returns the error. Either way, running it
// again finishes the same erasure (a killed one included) and its receipt
// names every key the erasure destroyed.
func (h *Handle) ForgetWith(ctx context.Context, subject string, opt ForgetOptions) (keys.Receipt, error) {
	if h.Keys == nil {
		return keys.Receipt{}, ErrNoSubjects
	}
	if err := subjectOwnsNothing(h.Keys.Subjects(), subject); err != nil {
		return keys.Receipt{}, err
	}
	if h.erasureRefused != nil {
		return keys.Receipt{}, fmt.Errorf("vault: forget %q refused: the database's erasures are recorded against another key table or mapping, "+
			"and MEMVAULT_DANGEROUS_SKIP_KEY_CHECK opened it anyway; an erasure here would not be recorded in the database (forget with "+
			"the key table the database pins): %w", subject, h.erasureRefused)
	}
	if opt.RefuseEmpty {
		owns, err := h.subjectOwnsAnything(ctx, subject)
		if err != nil {
			return keys.Receipt{}, fmt.Errorf("vault: forget %q: %w", subject, err)
		}
		if !owns {
			return keys.Receipt{}, fmt.Errorf("%w: forget %q: no data key, no erasure begun, no thread and no memory of the subject; nothing was recorded", ErrNothingToForget, subject)
		}
	}
	var held *heldLock
	locked := false
	if l := h.forgetLock(); l != nil && h.erasureMarks != nil {
		// Held from before the claim until the intent is done: an Open
		// meanwhile leaves the intent to this Forget (finishIntents).
		var err error
		if held, err = takeForgetLock(ctx, l, opt.LockWait); err != nil {
			return keys.Receipt{}, fmt.Errorf("vault: forget %q: %w", subject, err)
		}
		if held != nil {
			defer held.release()
		}
		locked = true
	}
	// The record comes once the lock is held, so that a Forget refused
	// with ErrErasureLocked, which changed nothing, records no erasure;
	// and before anything is claimed or destroyed.
	if err := h.log(ctx, audit.OpSubjectErase, subject, subject); err != nil {
		return keys.Receipt{}, err
	}
	if locked {
		if err := h.finishKilled(ctx, subject, opt); err != nil {
			return keys.Receipt{}, fmt.Errorf("vault: forget %q: %w", subject, err)
		}
	}
	e, intent, err := h.beginErasure(ctx, subject, held)
	if err != nil {
		return keys.Receipt{}, err
	}
	if h.erasureMarks != nil {
		// The lock lost since the key transaction: an Open may be
		// finishing this intent; it is left to it.
		if err := held.still(ctx); err != nil {
			return keys.Receipt{}, fmt.Errorf("keys destroyed; %w", h.lockLost(subject, err))
		}
		// From now on a copy of the key table taken before is refused
		// (checkKeyErasures), and the intent is done; a run that dies
		// before leaves it to the next process that opens the database,
		// as a rerun does. Other Forgets' intents are theirs to finish.
		if err := h.checkKeyErasures(ctx, h.erasureMarks, false); err != nil {
			return keys.Receipt{}, fmt.Errorf("vault: forget %q: keys destroyed; %w", subject, err)
		}
		if err := h.erasureMarks.Mark(ctx, erasureDoneMark(intent), "1"); err != nil {
			return keys.Receipt{}, fmt.Errorf("vault: forget %q: keys destroyed; %w", subject, err)
		}
	}
	if held != nil {
		held.release()
	}
	pending := func(err error) (keys.Receipt, error) {
		if cur, rerr := h.Keys.Erasure(ctx, subject); rerr == nil && cur != nil {
			e = *cur
		}
		err = h.ScrubSecrets(err)
		return h.Keys.ErasureReceipt(e, err.Error()), err
	}
	purge := keys.PurgeOptions{Wait: opt.Wait, Progress: opt.Progress}
	for _, w := range []any{h.Saver, h.Store} {
		// Writes that began before the keys were destroyed must finish
		// before rows are deleted, whatever the wait for readers: with
		// Wait negative ("do not wait for readers") the drain would have
		// no time at all, and no forget would ever delete a row.
		now := time.Now()
		deadline := purge.Deadline(now)
		if least := now.Add(minDrainWait); deadline.Before(least) {
			deadline = least
		}
		dctx, cancel := context.WithDeadline(ctx, deadline)
		err := drainWrites(dctx, w)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", keys.ErrErasurePending, err)
		}
		if err != nil {
			return pending(fmt.Errorf("vault: forget %q: keys destroyed; %w", subject, err))
		}
	}
	if err := h.forgetRows(ctx, subject); err != nil {
		return pending(fmt.Errorf("vault: forget %q: keys destroyed; %w", subject, err))
	}
	if err := h.Keys.PurgeErasure(ctx, e, purge); err != nil {
		return pending(fmt.Errorf("vault: forget %q: keys destroyed, rows deleted; %w", subject, err))
	}
	r, err := h.Keys.FinishErasure(ctx, subject)
	if err != nil {
		return pending(err)
	}
	return r, nil
}

// finishKilled finishes, before ForgetWith claims its own intent, the
// intents of Forgets killed before they were done, as Open does: holding
// the erasure lock, it knows no other Forget is live. Without it, this
// Forget's intent was numbered after the killed one's and its erasure
// counted before it in the key table, so its subject's guard record stood
// past the table's count, refusing the subject's writes after a Readmit
// until a process opened the database. Each erasure it finishes is
// recorded in the audit trail (but the subject's own, which ForgetWith
// records) and told to opt.Progress. Only where there
// is a lock (forgetLock): without one, an intent not done may be a live
// Forget's.
func (h *Handle) finishKilled(ctx context.Context, subject string, opt ForgetOptions) error {
	var r intentReport
	err := h.finishIntents(ctx, h.erasureMarks, true, &r)
	for _, s := range r.finished {
		if s == subject {
			continue // a rerun of a killed Forget: this one's own record says it
		}
		if lerr := h.log(ctx, audit.OpSubjectErase, s, s); lerr != nil && err == nil {
			err = lerr
		}
	}
	if opt.Progress != nil {
		for _, w := range r.warnings {
			opt.Progress(w)
		}
	}
	return err
}

// beginErasure is ForgetWith's first step after its audit record: the
// intent written to the data database (claimErasure; its number is
// returned, 0 without marks), then the erasure recorded and the keys
// destroyed in the key table's transaction.
func (h *Handle) beginErasure(ctx context.Context, subject string, held *heldLock) (keys.Erasure, int64, error) {
	var intent int64
	if h.erasureMarks != nil {
		if err := h.Keys.Subjects().CheckSubject(subject); err != nil {
			return keys.Erasure{}, 0, err
		}
		var err error
		if intent, err = h.claimErasure(ctx, subject); err != nil {
			return keys.Erasure{}, 0, err
		}
		if h.afterClaim != nil {
			h.afterClaim(intent)
		}
		// The lock lost since the claim: an Open may be finishing the
		// intent, which this Forget leaves to it rather than race it.
		if err := held.still(ctx); err != nil {
			return keys.Erasure{}, 0, h.lockLost(subject, err)
		}
	}
	if err := h.bindNamedThreads(ctx, subject); err != nil {
		return keys.Erasure{}, intent, err
	}
	e, err := h.Keys.StartErasure(ctx, subject)
	return e, intent, err
}

// bindNamedThreads binds to subject, in the live key table, every thread
// it binds to no one whose checkpoint metadata names subject (subjects by
// metadata only), before the erasure destroys the keys of the threads
// bound to subject. Such a thread ran here anonymously (its values sealed
// under a key of its own in this table) and was bound to subject by a
// process on a copy of the key table: unbound here, its own key would
// outlive the erasure, and a backup from before it would still open the
// thread's anonymous checkpoints. A rerun after the keys were destroyed
// finds subject erased (keys.ErrSubjectErased) and binds nothing more.
func (h *Handle) bindNamedThreads(ctx context.Context, subject string) error {
	sub := h.Keys.Subjects()
	if sub.ThreadMetadataKey == "" {
		return nil
	}
	named, err := h.metadataThreadIDs(ctx, sub.ThreadMetadataKey, subject)
	if err != nil {
		return fmt.Errorf("vault: forget %q: %w", subject, err)
	}
	for _, id := range named {
		owner, err := h.Keys.ThreadSubject(ctx, id)
		if err != nil {
			return fmt.Errorf("vault: forget %q: %w", subject, err)
		}
		if owner != "" {
			continue
		}
		err = h.Keys.BindThreadTo(ctx, id, subject)
		if errors.Is(err, keys.ErrSubjectErased) {
			return nil
		}
		if err != nil && !errors.Is(err, keys.ErrSubjectMismatch) {
			return fmt.Errorf("vault: forget %q: %w", subject, err)
		}
	}
	return nil
}

// lockLost is the error of a Forget of subject that lost its erasure
// lock: it stops there, and forgets the subject's keys this process
// cached, which an Open that took the lock may be destroying (so this
// process reads nothing of the subject with them meanwhile).
func (h *Handle) lockLost(subject string, err error) error {
	h.Keys.Evict(subject)
	return fmt.Errorf("vault: forget %q: %w", subject, err)
}

// rowThreadIDs is a saver that lists every thread holding any row
// (engine.Saver.RowThreadIDs).
type rowThreadIDs interface {
	RowThreadIDs(ctx context.Context) iter.Seq2[string, error]
}

// minDrainWait is the least time a Forget gives writes that began before
// its keys were destroyed to finish (ForgetOptions.Wait may be shorter or
// negative: it bounds the wait for readers).
const minDrainWait = 10 * time.Second

// drainWrites lets v (a saver or a store, possibly wrapped) finish the
// writes that began before, when it has a way to (SQLite's write lock, the
// memory saver's mutex).
func drainWrites(ctx context.Context, v any) error {
	if d, ok := wrapped[interface{ DrainWrites(context.Context) error }](v); ok {
		return d.DrainWrites(ctx)
	}
	return nil
}

// wrapped returns the first of v and the savers or stores under its
// wrappers (Unwrap) that is a T.
func wrapped[T any](v any) (T, bool) {
	for v != nil {
		if t, ok := v.(T); ok {
			return t, true
		}
		switch u := v.(type) {
		case interface{ Unwrap() checkpointer.Saver }:
			v = u.Unwrap()
		case interface{ Unwrap() store.Store }:
			v = u.Unwrap()
		default:
			v = nil
		}
	}
	var zero T
	return zero, false
}

// forgetRows deletes subject's threads and items and counts them in the
// erasure record: the threads before they are deleted (a run killed while
// deleting still reports them), the items as each delete returns. With
// subjects by metadata the threads' bindings stay, as tombstones, until
// Readmit: a stale writer of one of them then gets no key.
func (h *Handle) forgetRows(ctx context.Context, subject string) error {
	sub := h.Keys.Subjects()
	ids, err := h.subjectThreadIDs(ctx, subject)
	if err != nil {
		return err
	}
	if err := h.Keys.CountErased(ctx, subject, len(ids), 0); err != nil {
		return err
	}
	if err := deleteThreads(ctx, h.Saver, ids); err != nil {
		return fmt.Errorf("delete threads: %w", err)
	}
	items, err := deleteSubjectItems(ctx, h.Store, sub, subject)
	if cerr := h.Keys.CountErased(ctx, subject, 0, items); err == nil {
		err = cerr
	}
	return err
}

// subjectOwnsAnything reports whether subject has anything here that a
// forget erases or finishes: a data key, an erasure begun (a rerun
// finishes it), a thread or a memory (ForgetOptions.RefuseEmpty).
func (h *Handle) subjectOwnsAnything(ctx context.Context, subject string) (bool, error) {
	ks, err := h.Keys.KeyPage(ctx, subject, 0, 1) // versions start at 1
	if err != nil {
		return false, fmt.Errorf("read keys: %w", err)
	}
	if len(ks) > 0 && ks[0].Subject == subject {
		return true, nil
	}
	e, err := h.Keys.Erasure(ctx, subject)
	if err != nil {
		return false, err
	}
	if e != nil && !e.Readmitted {
		return true, nil
	}
	ids, err := h.subjectThreadIDs(ctx, subject)
	if err != nil || len(ids) > 0 {
		return len(ids) > 0, err
	}
	return subjectHasItems(ctx, h.Store, h.Keys.Subjects(), subject)
}

// subjectThreadIDs returns the threads a forget of subject deletes: those
// bound to it with subjects by metadata, those whose id names it with
// subjects by thread id.
func (h *Handle) subjectThreadIDs(ctx context.Context, subject string) ([]string, error) {
	sub := h.Keys.Subjects()
	var ids []string
	switch {
	case sub.ThreadMetadataKey != "":
		var err error
		if ids, err = h.Keys.SubjectThreads(ctx, subject); err != nil {
			return nil, err
		}
		named, err := h.metadataThreadIDs(ctx, sub.ThreadMetadataKey, subject)
		if err != nil {
			return nil, err
		}
		if len(named) > 0 {
			bound := make(map[string]bool, len(ids))
			for _, id := range ids {
				bound[id] = true
			}
			for _, id := range named {
				if bound[id] {
					continue
				}
				// A thread the key table binds to another subject is
				// that subject's (its metadata was written by another
				// writer, or before a rebinding): not this forget's.
				owner, err := h.Keys.ThreadSubject(ctx, id)
				if err != nil {
					return nil, err
				}
				if owner == "" || owner == subject {
					ids = append(ids, id)
				}
			}
		}
	case sub.ThreadSeparator != "":
		if rt, ok := wrapped[rowThreadIDs](h.Saver); ok {
			// Every thread holding any row, a thread whose
			// checkpoints are gone and whose values or pending writes
			// stay included (TestForgetThreadWithOnlyWrites,
			// TestMongoForgetThreadWithOnlyWrites); a driver that
			// cannot list them says so first, and ListThreads serves.
			var err error
			for th, e := range rt.RowThreadIDs(ctx) {
				if err = e; err != nil {
					break
				}
				if sub.ThreadSubject(th) == subject {
					ids = append(ids, th)
				}
			}
			if err == nil {
				break
			}
			if !errors.Is(err, errors.ErrUnsupported) || len(ids) > 0 {
				return nil, fmt.Errorf("list threads: %w", err)
			}
		}
		lister, ok := h.Saver.(checkpointer.ThreadLister)
		if !ok {
			return nil, fmt.Errorf("the saver cannot list threads")
		}
		for th, err := range lister.ListThreads(ctx) {
			if err != nil {
				return nil, fmt.Errorf("list threads: %w", err)
			}
			if sub.ThreadSubject(th.ThreadID) == subject {
				ids = append(ids, th.ThreadID)
			}
		}
	}
	return ids, nil
}

func openSQLite(ctx context.Context, c config.Config, h *Handle) error {
	h.Backend, h.dbPath = config.BackendSQLite, c.DBPath
	if c.MustExist {
		if err := sqliteMustExist(c); err != nil {
			return err
		}
	}
	if err := openKeys(ctx, c, h, nil); err != nil {
		return err
	}
	// No memory map, as the store that shares the file reads it (the
	// first Open of the file decides for both): the saver's reads cost
	// the same without one.
	sv, err := sqlitesaver.Open(ctx, c.DBPath, sqlitesaver.Options{Serde: h.Serde, VersionStyle: c.Versions,
		GroupCommit: c.GroupCommit, FullSync: c.SQLiteFullSync, NoMmap: true,
		Retention: c.Retention, SweepInterval: c.RetentionSweepInterval})
	if err != nil {
		return err
	}
	h.Saver = sv
	h.closers = append(h.closers, sv.Close)
	return openStore(c, h, func() (store.Store, error) {
		return sqlitestore.Open(ctx, c.DBPath, sqlitestore.Options{Index: indexConfig(c, h.Embedder, h.shared), TTL: ttlConfig(c), Serde: h.StoreSerde})
	})
}

// openStore opens the store with h.Embedder; when the store's vectors were
// made by another embedder that vectorEmbedder knows how to keep using (a
// previous key's, or the public one of a store older than protection), or
// before data subjects had vector spaces of their own, it opens it again
// with that one (in the shared space) and records why in h.Warnings.
func openStore(c config.Config, h *Handle, open func() (store.Store, error)) error {
	st, err := open()
	var mismatch *store.EmbedderMismatchError
	if errors.As(err, &mismatch) {
		// What the store adds to the embedder's name: its data
		// subjects' vector spaces.
		spaces, _ := strings.CutPrefix(mismatch.Configured, h.Embedder.Name())
		emb, shared, warning, verr := vectorEmbedder(c, h.public, h.Keyring, mismatch.Recorded, spaces)
		if verr != nil {
			return verr
		}
		if warning == "" {
			if id := vectorKeyID(mismatch.Recorded); id != "" && !h.hasKey(id) && !c.DangerousSkipKeyCheck {
				// Not another embedder: the key that made them is not
				// loaded.
				return h.keyNotLoaded("the store's vectors were made", id)
			}
			if _, ns, ok := strings.Cut(mismatch.Recorded, "+subjects:"); ok && spaces == "" {
				// Subjects' spaces need the subjects' keys to search.
				return fmt.Errorf("vault: per-subject keys are off, but the store keeps data subjects' vectors in spaces of their own, which only their keys search (set MEMVAULT_SUBJECT_NAMESPACE=%s): %w", ns, err)
			}
			return err
		}
		h.Embedder, h.shared = emb, shared
		h.Warnings = append(h.Warnings, warning)
		st, err = open()
	}
	if err != nil {
		return err
	}
	h.Store = st
	if c, ok := st.(interface{ Close() error }); ok {
		h.closers = append(h.closers, c.Close)
	}
	return nil
}

func openPostgres(ctx context.Context, c config.Config, h *Handle) error {
	h.Backend, h.schema = config.BackendPostgres, c.Schema
	pool, err := pgxpool.New(ctx, c.DSN)
	if err != nil {
		return fmt.Errorf("vault: MEMVAULT_DSN: %w", err)
	}
	h.Pool = pool
	h.closers = append(h.closers, func() error { pool.Close(); return nil })
	if c.MustExist {
		// The checkpointer's or the store's tracking table (LangGraph's
		// names, which memvault shares): a schema with neither was never set
		// up by memvault or LangGraph.
		if err := pgMustExist(ctx, pool, "checkpointer or store tables", "MEMVAULT_SCHEMA", c.Schema, "checkpoint_migrations", "store_migrations"); err != nil {
			return err
		}
		if c.Audit {
			schema := c.AuditTable
			if schema == "" {
				schema = DefaultAuditSchema
			}
			if err := pgMustExist(ctx, pool, "audit trail", "MEMVAULT_AUDIT_TABLE", schema, "memvault_audit_migrations"); err != nil {
				return err
			}
		}
	}
	if err := openKeys(ctx, c, h, pool); err != nil {
		return err
	}
	sv, err := pgsaver.New(pool, pgsaver.Options{Schema: c.Schema, Serde: h.Serde, VersionStyle: c.Versions, GroupCommit: c.GroupCommit,
		Retention: c.Retention, SweepInterval: c.RetentionSweepInterval})
	if err != nil {
		return err
	}
	h.closers = append(h.closers, sv.Close) // stops its sweeper before the pool closes
	if err := sv.Setup(ctx); err != nil {
		return err
	}
	h.Saver = sv
	cache := c.CacheSize
	if cache == 0 {
		cache = -1
	}
	return openStore(c, h, func() (store.Store, error) {
		st, err := pgstore.New(pool, pgstore.Options{Schema: c.Schema, Index: indexConfig(c, h.Embedder, h.shared), TTL: ttlConfig(c), Serde: h.StoreSerde, CacheSize: cache})
		if err != nil {
			return nil, err
		}
		if err := st.Setup(ctx); err != nil {
			_ = st.Close()
			return nil, err
		}
		return st, nil
	})
}
