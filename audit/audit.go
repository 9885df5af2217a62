package audit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Operations recorded by Saver, Store and vault.Handle.
const (
	OpCheckpointRead = "checkpoint.read"
	// OpCheckpointList is a listing of every thread's checkpoints (target
	// "*"); a listing of one thread is a checkpoint.read of it.
	OpCheckpointList  = "checkpoint.list"
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

// Operations the trail records about itself. Callers cannot log them: the
// "audit." prefix is reserved.
const (
	// OpKeyChange records that the audit key changed (the primary master
	// key did): its target is "<old key id> -> <new key id>" and it carries
	// a MAC under each, the new key's vouching for every record before it.
	OpKeyChange = "audit.key_change"
	// OpAnchor records that the head was anchored (Trail.Anchor).
	OpAnchor = "audit.anchor"
)

// reservedOps is the prefix of the operations only the trail writes.
const reservedOps = "audit."

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
	// Link is the record's place in the hash chain (hex SHA-256 over the
	// previous record's link and this record's fields; the first record's
	// "previous link" is derived from the database id). Empty for records
	// written by memvault before the hash chain (format 1).
	Link string `json:"link,omitempty"`
	// MAC authenticates Link: "<audit key id>:<hex HMAC-SHA256>", two of
	// them separated by a comma on a key change (the new key's first).
	// Format-1 records hold a bare hex HMAC chained to the previous MAC.
	MAC string `json:"mac"`
	// PendingID is the id of the pending record (Pending.ID) this record
	// was chained from, "" for a record appended directly (and for every
	// record chained before memvault kept it). Its link covers it, so the
	// chain itself says which pending records it consumed: a pending row
	// copied and inserted again once chained is refused by the chainer
	// and reported by Check, never chained twice (see PendingTable).
	PendingID string `json:"pending_id,omitempty"`
}

// Table stores the trail. Implementations are safe for concurrent use, also
// by several processes. They store what they are given: every rule (which
// sequence number, link and MAC a record gets) is the Trail's.
type Table interface {
	// Append runs one transaction, atomic with respect to every other
	// appender: it reads the last record (nil when the trail is empty; its
	// Seq, Link and MAC are all chain needs, the other fields may be left
	// zero), passes it to chain, and stores the records chain returns
	// exactly as they are (Seq, Link and MAC set). When chain fails it
	// stores nothing and returns chain's error (wrapped or not). chain may
	// be called again if the transaction is retried.
	Append(ctx context.Context, chain func(last *Record) ([]Record, error)) error
	// Page returns the records after sequence number after, in order, at
	// most limit of them.
	Page(ctx context.Context, after int64, limit int) ([]Record, error)
}

// Errors.
var (
	// ErrTampered is returned by Verify when the trail does not hold: it
	// was edited, cut, extended, reordered or replaced outside memvault
	// (or, also ErrUnverifiable, it cannot be authenticated, which a
	// verifier must treat alike); and by the writer when it will not vouch
	// for a trail whose last record does not hold.
	ErrTampered = errors.New("audit: the trail was tampered with")
	// ErrUnverifiable is returned when records cannot be authenticated with
	// the configured keys: they are under an audit key that is not
	// configured and no later record under a configured key vouches for
	// them, or the trail ends under a previous key (see the package doc).
	// Errors wrapping it wrap ErrTampered too.
	ErrUnverifiable = errors.New("audit: the trail cannot be verified with the configured keys")
	// ErrInvalidPrincipal is returned when a record would name a principal
	// holding a control character: printed in a review, it could pass for
	// other records.
	ErrInvalidPrincipal = errors.New("audit: invalid principal")
	// ErrReservedOp is returned when a caller logs an "audit." operation,
	// which only the trail itself writes.
	ErrReservedOp = errors.New("audit: reserved operation")
	// ErrInvalidEntry is returned, and nothing recorded, for an entry
	// holding a NUL byte or invalid UTF-8 (which a PostgreSQL trail cannot
	// store: it failed every caller of its group commit).
	ErrInvalidEntry = errors.New("audit: invalid entry")
)

// Options configures NewTrail. Key is required.
type Options struct {
	// Key authenticates new records: at least 32 bytes, the audit key
	// derived from the primary master key (keys.DeriveAuditKey).
	Key []byte
	// Previous are the audit keys of earlier master keys
	// (LANGGRAPH_AES_KEY_PREVIOUS). Each verifies the records written under
	// it; while one is configured, the first record written under Key
	// records the key change, authenticated under both.
	Previous [][]byte
	// DatabaseID binds the chain to the database whose operations it
	// records (audit/sqliteaudit.DatabaseID, audit/pgaudit.DatabaseID): the
	// trail of another database, copied here, fails Verify. Empty binds the
	// trail to no database (in-memory databases, tests).
	DatabaseID string
	// Meta is where the data database records that the trail's hash chain
	// began (audit/sqliteaudit.Meta, audit/pgaudit.Meta: its memvault_meta
	// table, next to the database id, out of reach of whoever can only
	// write the trail). The first writer of this version marks it; from
	// then on a trail without a hash-chained record — this database's
	// trail cut back to before the upgrade, another database's older trail
	// put in its place, or an empty one — fails Verify and is not
	// extended. nil (no data database, tests): such a trail verifies as a
	// trail written before the hash chain.
	Meta Meta
	// WritesInTx: the data the trail records operations on lives in the
	// trail's database (the same PostgreSQL database, the same SQLite
	// file), so an audited write inserts its record in its own
	// transaction (RecordInTx) instead of committing it first — one
	// commit for both. Only with a table that keeps pending records
	// (PendingTable); leave it unset when the data lives elsewhere.
	WritesInTx bool
	// Now is the clock records are timed by; nil is time.Now. Tests set
	// it to make records older than they are (Report.Late).
	Now func() time.Time
}

// Meta keeps, in the data database the trail is bound to, the one fact
// about the trail that whoever can write the trail's tables must not be
// able to undo: that its hash chain (format 2) began. Implementations are
// safe for concurrent use, also by several processes.
type Meta interface {
	// ChainBegan reports whether MarkChainBegan was called (by any
	// process) for this database.
	ChainBegan(ctx context.Context) (bool, error)
	// MarkChainBegan records durably, for good, that the trail's hash
	// chain began. Calling it again changes nothing.
	MarkChainBegan(ctx context.Context) error
}

// Trail records operations in a Table.
type Trail struct {
	table Table
	keys  []auditKey // [0] authenticates new records; all verify
	dbID  string
	meta  Meta // nil: no record of the chain's beginning
	now   func() time.Time

	// began caches that meta records the chain's beginning (which never
	// goes back), so that each process reads and marks it once.
	began atomic.Bool
	// headSeen is set once this trail found its table holding the chain
	// the data database says began, or found that it has not begun
	// (headCheck).
	headSeen atomic.Bool

	mu     sync.Mutex
	cursor *walkState // where catchUp left off (format-1 heads only)
	head   head       // the last record this process appended (direct.go)

	group group // appenders waiting for a commit (group.go)

	writesInTx bool         // Options.WritesInTx
	chaining   chainer      // pending records' chaining (pending.go)
	pending    pendingGroup // readers' pending records waiting for an INSERT (pending.go)
	// readers counts the audited reads in flight that could carry their
	// record in their own transaction (Saver.readInTx): one alone does,
	// several share the readers' INSERTs instead.
	readers atomic.Int64
}

// New returns the trail of table, authenticated under key (at least 32
// bytes) and bound to no database; records written under the previous keys
// (after the master key was rotated) still verify. NewTrail binds it.
func New(table Table, key []byte, previous ...[]byte) (*Trail, error) {
	return NewTrail(table, Options{Key: key, Previous: previous})
}

// NewTrail returns the trail of table configured by opts.
func NewTrail(table Table, opts Options) (*Trail, error) {
	if table == nil {
		return nil, errors.New("audit: nil table")
	}
	t := &Trail{table: table, dbID: opts.DatabaseID, meta: opts.Meta, now: time.Now, writesInTx: opts.WritesInTx}
	if opts.Now != nil {
		t.now = opts.Now
	}
	for _, k := range append([][]byte{opts.Key}, opts.Previous...) {
		if len(k) < 32 {
			return nil, fmt.Errorf("audit: key of %d bytes, want at least 32", len(k))
		}
		ak := newAuditKey(k)
		if t.key(ak.id) != nil {
			continue // the same key twice adds nothing
		}
		t.keys = append(t.keys, ak)
	}
	return t, nil
}

// DatabaseID returns the id of the database the trail is bound to ("" for
// none).
func (t *Trail) DatabaseID() string { return t.dbID }

// KeyID returns the public id of the audit key new records are written
// under, as records and anchors name it (never the key).
func (t *Trail) KeyID() string { return t.keys[0].id }

// key returns the configured key with id, or nil.
func (t *Trail) key(id string) *auditKey {
	for i := range t.keys {
		if t.keys[i].id == id {
			return &t.keys[i]
		}
	}
	return nil
}

type principalKey struct{}

// WithPrincipal returns ctx naming who acts (a user, a service); records
// made with it carry the name. A principal holding a control character
// (a newline, a tab, an escape) is refused when a record is written
// (ErrInvalidPrincipal).
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal returns the principal ctx names ("" for none).
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// recordPrincipal is the principal ctx names as a record keeps it:
// checked (CheckPrincipal) and bounded as its target is (MaxTargetBytes),
// so that a caller-supplied name cannot grow the append-only trail by
// its size.
func recordPrincipal(ctx context.Context) (string, error) {
	who := Principal(ctx)
	if err := CheckPrincipal(who); err != nil {
		return "", err
	}
	return bounded(who), nil
}

// CheckPrincipal returns ErrInvalidPrincipal, saying why, when p is not
// valid UTF-8 or holds a control character or a bidirectional-text
// control (which reorders what a terminal shows).
func CheckPrincipal(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w %q: not valid UTF-8", ErrInvalidPrincipal, bounded(p))
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("%w %q: it holds the control character %U", ErrInvalidPrincipal, bounded(p), r)
		}
	}
	return nil
}

// Entry is what a caller records: the rest of a Record comes from the
// trail (time, principal, sequence number, link, MAC).
type Entry struct {
	Op, Target, Subject, KeyID string
}

// MaxTargetBytes bounds each text a record keeps — its target, subject
// and key id: a longer one (from a read of a huge id, which no write can
// store: stored ids are at most 512 bytes) is kept as its first bytes, its
// length and its SHA-256, so that reads cannot grow the append-only trail
// by what a caller sends.
const MaxTargetBytes = 1024

// normalized checks e's text and bounds its target, subject and key id
// (MaxTargetBytes).
func (e Entry) normalized() (Entry, error) {
	for _, f := range [...]struct{ name, v string }{{"operation", e.Op}, {"target", e.Target}, {"subject", e.Subject}, {"key id", e.KeyID}} {
		if strings.IndexByte(f.v, 0) >= 0 || !utf8.ValidString(f.v) {
			return e, fmt.Errorf("%w: its %s holds a NUL byte or invalid UTF-8", ErrInvalidEntry, f.name)
		}
	}
	e.Target, e.Subject, e.KeyID = bounded(e.Target), bounded(e.Subject), bounded(e.KeyID)
	return e, nil
}

// bounded is s, or when longer than MaxTargetBytes its first 256 bytes (at
// most: whole characters), its length and its SHA-256.
func bounded(s string) string {
	if len(s) <= MaxTargetBytes {
		return s
	}
	cut := 256
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s…[%d bytes, sha256 %x]", s[:cut], len(s), sum)
}

// normalizedAll is normalized of each entry: es itself when none changes
// (the common case, no copy on every append), else a new slice.
func normalizedAll(es []Entry) ([]Entry, error) {
	out := es
	for i, e := range es {
		n, err := e.normalized()
		if err != nil {
			return nil, err
		}
		if n != e {
			if &out[0] == &es[0] {
				out = slices.Clone(es) // the caller's slice stays as it is
			}
			out[i] = n
		}
	}
	return out, nil
}

// Log appends a record of op on target by ctx's principal.
func (t *Trail) Log(ctx context.Context, op, target, subject, keyID string) error {
	return t.LogAll(ctx, []Entry{{Op: op, Target: target, Subject: subject, KeyID: keyID}})
}

// LogAll appends a record per entry, in order, in one transaction. When
// the audit key changed since the last record, a key change record comes
// first. The transaction also holds the records of this Trail's other
// callers that queued while the previous one committed (group commit); it
// returns once that transaction committed, with its error when it did
// not.
func (t *Trail) LogAll(ctx context.Context, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	es, err := normalizedAll(es)
	if err != nil {
		return err
	}
	for _, e := range es {
		if strings.HasPrefix(e.Op, reservedOps) {
			return fmt.Errorf("%w %q", ErrReservedOp, e.Op)
		}
	}
	if err := t.readyToRecord(ctx, es); err != nil {
		return err
	}
	_, err = t.append(ctx, es)
	return err
}

// chainBegan reports whether the data database records that the trail's
// hash chain began (false without Meta).
func (t *Trail) chainBegan(ctx context.Context) (bool, error) {
	if t.meta == nil {
		return false, nil
	}
	if t.began.Load() {
		return true, nil
	}
	began, err := t.meta.ChainBegan(ctx)
	if err != nil {
		return false, fmt.Errorf("audit: read whether the hash chain began: %w", err)
	}
	if began {
		t.began.Store(true)
	}
	return began, nil
}

// Filter narrows Records.
type Filter struct {
	// Subject keeps the records of one subject ("" for all), and the
	// listings of every thread's checkpoints (checkpoint.list, recorded
	// before the listing, when which subjects it returns is not known
	// yet): they may have returned the subject's data. A store
	// search records each subject whose items it returned. It also keeps
	// the changes of unknown targets recorded with no subject (retention
	// and TTL sweeps, DeleteForRuns, prefix deletes, re-encryptions:
	// anySubjectChanged), which may have changed the subject's data.
	Subject string
	// Since keeps the records at or after it (zero for all).
	Since time.Time
}

// Records calls fn with each record f keeps, in order. It verifies
// nothing: Verify does. Pending records (PendingTable) are chained first
// when they can be, so that a write's record is listed once the write
// returned; when chaining fails, the chained records are listed all the
// same (Check says why the rest is not).
func (t *Trail) Records(ctx context.Context, f Filter, fn func(Record) error) error {
	_ = t.Flush(ctx)
	var last int64
	for {
		page, err := t.table.Page(ctx, last, pageSize)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for _, r := range page {
			last = r.Seq
			if !f.keeps(r) {
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

// Keeps reports whether f keeps r, as Records and CheckRecords do: a
// caller filtering records it reads some other way (the inspector's
// audit view) applies the same rule, the listings and changes of every
// subject included.
func (f Filter) Keeps(r Record) bool { return f.keeps(r) }

// keeps reports whether f keeps r (Records and CheckRecords alike).
func (f Filter) keeps(r Record) bool {
	if f.Subject != "" && r.Subject != f.Subject && !allThreads(r) && !anySubjectChanged(r) {
		return false
	}
	return f.Since.IsZero() || !r.Time.Before(f.Since)
}

// anySubjectChanged reports whether r is a change whose targets were not
// known when it was recorded, so that it names no subject though it may
// have changed any subject's data: a retention sweep (thread.delete
// "retention:…"), DeleteForRuns ("runs:N"), the store's TTL sweep
// (item.delete TargetTTLSweep), a delete of a namespace prefix (such as
// ("users"), every user's items; an item's target holds "/"), and a
// re-encryption. A subject's report keeps them, as it keeps listings of
// every thread: before, `audit show --subject carol` left out every one
// of them, including those that deleted her threads and memories.
func anySubjectChanged(r Record) bool {
	if r.Subject != "" {
		return false
	}
	switch r.Op {
	case OpThreadDelete:
		return strings.HasPrefix(r.Target, "retention:") || strings.HasPrefix(r.Target, "runs:")
	case OpItemDelete:
		return r.Target == TargetTTLSweep || !strings.Contains(r.Target, "/")
	case OpReencrypt:
		return true
	}
	return false
}

// allThreads reports whether r is a listing of every thread's checkpoints
// (Saver.List with AllThreads or no thread).
// Earlier versions recorded those as a checkpoint.read of "*", which a
// read of a thread named "*" also is: they are not taken for listings.
func allThreads(r Record) bool {
	// Whatever its subject: session 27's version named the subject of a
	// thread called "*" (bound by ThreadMetadataKey) in such records.
	return r.Op == OpCheckpointList
}

// pageSize is how many records a read of the trail fetches at once.
const pageSize = 1000
