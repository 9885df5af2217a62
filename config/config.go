package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
)

// EncryptionMode chooses how values are encrypted at rest.
type EncryptionMode string

const (
	// EncryptionEnvelope is memvault's envelope (AES-256-GCM under derived
	// record keys, bound to where the value lives). The default when a key is set.
	EncryptionEnvelope EncryptionMode = "envelope"
	// EncryptionLangGraph writes LangGraph's "aes" format (no binding), for
	// databases shared with Python LangGraph services.
	EncryptionLangGraph EncryptionMode = "langgraph"
	// EncryptionOff stores values in plaintext. The default without a key.
	EncryptionOff EncryptionMode = "off"
)

// Keys holds encryption keys in the forms LANGGRAPH_AES_KEY accepts (raw
// 16/24/32-character strings, or "base64:…" / "hex:…"). Its String method
// never shows them.
type Keys struct {
	// Primary encrypts and decrypts.
	Primary string
	// Previous keys only decrypt (key rotation).
	Previous []string
}

// String reports which keys are set, never their bytes.
func (k Keys) String() string {
	set := "unset"
	if k.Primary != "" {
		set = "set"
	}
	return fmt.Sprintf("Keys{primary: %s, previous: %d}", set, len(k.Previous))
}

// GoString is String, so %#v does not print keys either.
func (k Keys) GoString() string { return k.String() }

// Format makes every fmt verb print String: without it, verbs that skip
// Stringer (%d, %t, ...) print the fields, keys included.
func (k Keys) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// MarshalJSON reports which keys are set, never their bytes, so a Config
// encoded as JSON (a debug dump, a log record) does not carry the keys.
func (k Keys) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Primary  bool `json:"primary_set"`
		Previous int  `json:"previous"`
	}{k.Primary != "", len(k.Previous)})
}

// Config is everything vault.Open needs. The zero value is not meaningful; start
// from Default or FromEnv.
type Config struct {
	// DSN selects the database server (MEMVAULT_DSN, else DATABASE_URL) by
	// its scheme: PostgreSQL (postgres://, postgresql://, or a keyword/value
	// string), MongoDB (mongodb://, mongodb+srv://) or Redis (redis://,
	// rediss://, redis+cluster://), the last two served by backend modules
	// a program imports (see vault.RegisterBackend; the memvault CLI
	// imports both). Empty means the embedded SQLite file DBPath.
	DSN string
	// DBPath is the SQLite file (MEMVAULT_DB; default "memvault.db").
	DBPath string
	// Schema is the PostgreSQL schema (MEMVAULT_SCHEMA; default: none, so
	// search_path decides, as LangGraph does). With MongoDB it is the
	// database (default: the URI's, else "checkpointing_db", Python
	// MongoDBSaver's); with Redis the key prefix (default "memvault:cp").
	Schema string
	// Keys are LANGGRAPH_AES_KEY and LANGGRAPH_AES_KEY_PREVIOUS (comma
	// separated).
	Keys Keys
	// Encryption is MEMVAULT_ENCRYPTION: envelope (default when a key is
	// set), langgraph, or off (default without a key).
	Encryption EncryptionMode
	// DangerousAllowPlaintext lets an encrypting configuration read rows
	// written without encryption (MEMVAULT_ALLOW_PLAINTEXT=true), for
	// migrating an unencrypted database. Dangerous: whoever can write the
	// database can then plant plaintext values that are read as if they had
	// been sealed. Off by default: such rows are refused.
	DangerousAllowPlaintext bool
	// DangerousSkipKeyCheck opens a database whose values or vectors are
	// under a key this configuration does not load (vault.ErrKeyNotLoaded
	// otherwise): for `memvault keys census`, which decrypts nothing, and
	// for deleting data whose key is lost (MEMVAULT_DANGEROUS_SKIP_KEY_CHECK=true).
	// Dangerous: reads of such values fail, and with no key loaded new
	// values are written in plaintext beside the sealed ones.
	DangerousSkipKeyCheck bool
	// ReportOnly, set by a program (no environment variable) that opens a
	// database only to report on it (`memvault keys reencrypt --dry-run`),
	// makes vault.Open leave no mark that only a writer of sealed values
	// should leave: with a key loaded, Open otherwise marks the database
	// values_sealed, and from then on refuses processes without a key.
	// It refuses no write: the program must not write.
	ReportOnly bool
	// DangerouslyAcceptUnboundAES lets envelope mode read values in
	// LangGraph's "aes" format (MEMVAULT_DANGEROUSLY_ACCEPT_UNBOUND_AES=true),
	// for the one `memvault keys reencrypt` that moves a database out of
	// LangGraph mode. Such values are bound to no row: while this is on,
	// whoever can write the database can copy one under another thread or
	// user and it will be read there. Off by default: they are refused
	// (serde.ErrUnboundRefused). LangGraph mode reads them regardless.
	DangerouslyAcceptUnboundAES bool
	// Embeddings is MEMVAULT_EMBEDDINGS: "hash:<dims>" (default "hash:256",
	// offline), "openai:<model>[:<dims>]", or "none" (no semantic search).
	Embeddings string
	// OpenAIAPIKey and OpenAIBaseURL (OPENAI_API_KEY, OPENAI_BASE_URL) are
	// used by openai embeddings; the base URL may point at any
	// OpenAI-compatible server.
	OpenAIAPIKey, OpenAIBaseURL string
	// IndexFields are the value paths embedded for search
	// (MEMVAULT_INDEX_FIELDS, comma separated; default "$", the whole value).
	IndexFields []string
	// Distance is MEMVAULT_DISTANCE: cosine (default), l2 or inner_product.
	Distance store.Distance
	// CacheSize is the decrypted-item LRU size of the store
	// (MEMVAULT_CACHE_SIZE; default 10000; 0 disables).
	CacheSize int
	// EmbeddingCacheSize is the embeddings LRU size
	// (MEMVAULT_EMBEDDING_CACHE_SIZE; default 10000; 0 disables).
	EmbeddingCacheSize int
	// Versions is MEMVAULT_VERSIONS: "string" (Python LangGraph's channel
	// versions, default) or "int" (what JS LangGraph reads).
	Versions checkpointer.VersionStyle
	// VersionsSet records that Versions was chosen (FromLookup sets it when
	// MEMVAULT_VERSIONS is set; a program that sets Versions sets it too).
	// Without it the MongoDB and Redis backends write integer versions, as
	// Python's and JS's MongoDBSaver do, since Versions' zero value is
	// "string".
	VersionsSet bool
	// TTL is the store's expiry configuration: MEMVAULT_TTL_DEFAULT (a Go
	// duration such as "720h" applied to puts without their own TTL;
	// default 0, no expiry), MEMVAULT_TTL_REFRESH_ON_READ (default true: a
	// read of an item with a TTL restarts it, as LangGraph's
	// refresh_on_read) and MEMVAULT_TTL_SWEEP_INTERVAL (how often expired
	// items are deleted; default 5m; "off" disables the sweeper). Expired
	// items are never returned, swept or not.
	TTL store.TTLConfig
	// Retention is the checkpoint retention policy, applied by the saver's
	// background sweeper (see checkpointer.RetentionPolicy):
	// MEMVAULT_RETENTION_IDLE_TTL (a Go duration such as "720h": threads
	// whose newest checkpoint is older are deleted) and
	// MEMVAULT_RETENTION_KEEP_LATEST (an integer: only the newest N
	// checkpoints of each thread and namespace are kept). Default: keep
	// everything. Ages come from the UUIDv6 checkpoint ids; threads with
	// other ids are never found idle.
	Retention checkpointer.RetentionPolicy
	// RetentionSweepInterval is how often the Retention policy runs
	// (MEMVAULT_RETENTION_SWEEP_INTERVAL; default 1h; "off" runs none in
	// the background, leaving it to `memvault threads sweep` or a
	// program's own schedule, which is what a fleet of processes sharing
	// one PostgreSQL database should do).
	RetentionSweepInterval time.Duration
	// Durability is when a checkpoint write reaches the database
	// (MEMVAULT_DURABILITY: sync, async or exit; package
	// checkpointer/durable): Sync (the zero value) returns from Put once
	// it is committed; Async once it is queued, each thread's queue
	// written in order in the background; Exit holds a thread's writes
	// until its next call, Flush or Close. A crash loses at most the
	// queued writes; Handle.Close writes them.
	Durability durable.Mode
	// GroupCommit, 2 or more, commits concurrent callers' checkpoint
	// writes — any threads — together, up to GroupCommit in one
	// transaction, each succeeding or failing on its own
	// (MEMVAULT_GROUP_COMMIT; 0, the default, commits each write alone;
	// sqlitesaver.Options.GroupCommit, pgsaver.Options.GroupCommit). It
	// pays where each commit syncs the disk: SQLite with SQLiteFullSync.
	GroupCommit int
	// SQLiteFullSync syncs SQLite's write-ahead log on every commit
	// (MEMVAULT_SQLITE_FULL_SYNC=true; sqlitesaver.Options.FullSync): a
	// power loss then loses no acknowledged write. Off, a crash of the
	// process loses none, a power loss the last commits.
	SQLiteFullSync bool
	// Subjects turns on per-subject data keys (package keys): a thread's
	// subject is the part of its id before MEMVAULT_SUBJECT_THREAD_SEPARATOR
	// (such as ":"), or the value of the checkpoint metadata key
	// MEMVAULT_SUBJECT_THREAD_METADATA (such as "user_id"), a store item's
	// the namespace label after a prefix of MEMVAULT_SUBJECT_NAMESPACE
	// (comma-separated dotted prefixes such as "users", where a "*" label
	// matches any one label, such as "adk.*.sessions,adk.*.memory": the
	// first becomes Subjects.NamespacePrefix, the others
	// Subjects.NamespacePrefixes). Needs envelope encryption. The zero
	// value keeps one master key for all.
	Subjects keys.Subjects
	// KeyTable is where the wrapped data keys live (MEMVAULT_KEY_TABLE):
	// with SQLite a file (default: DBPath with ".keys" appended), with
	// PostgreSQL a schema of the same database (default "memvault_keys").
	// Keep it apart from the data and from the data's backups: a restored
	// backup of the data then stays unreadable for forgotten subjects.
	KeyTable string
	// KeyDSN, when set (MEMVAULT_KEY_DSN), puts the key table in that
	// PostgreSQL database (schema KeyTable, default "memvault_keys")
	// instead of beside the data: a database of its own, with its own
	// backups, whatever the data's backend.
	KeyDSN string
	// KEKProviders, set by a program (no environment variable), hold the
	// key-encryption keys of the data keys: the first wraps new ones, all
	// unwrap. nil means the environment's master keys (keys.EnvProviders).
	// A hardware security module's provider comes from the separate module
	// github.com/memvault/memvault/keyproviders/pkcs11; keep the
	// environment providers after it until `keys rotate-kek` has moved the
	// existing data keys under it.
	KEKProviders []keys.Provider
	// Audit turns on the audit trail (MEMVAULT_AUDIT=true): every read,
	// write and delete of the saver and the store, every erasure, key
	// rotation and re-encryption is recorded, chained under a key derived
	// from the master key. Needs LANGGRAPH_AES_KEY.
	Audit bool
	// AuditTable is where the trail lives (MEMVAULT_AUDIT_TABLE): with
	// SQLite a file (default: DBPath with ".audit" appended), with
	// PostgreSQL a schema (default "memvault_audit").
	AuditTable string
	// MustExist makes vault.Open open existing databases only (no environment
	// variable: a program or the CLI sets it, the CLI for every command
	// that writes no new data). With SQLite, DBPath and, when they are
	// used, the key file (KeyTable) and the audit file (AuditTable) must
	// exist; with PostgreSQL, the schema must hold the checkpointer's or
	// the store's tables (memvault's or LangGraph's), and the key and audit
	// schemas their tables. Otherwise vault.Open fails with an error wrapping
	// ErrNotFound that names what is missing, before it creates anything:
	// a mistyped path or schema is reported instead of being set up empty,
	// and an audit trail or key table that went missing is not replaced by
	// a new, empty one. Existing tables are still upgraded as usual.
	// Default false: vault.Open creates what is missing.
	MustExist bool
}

// SubjectsOn reports whether per-subject keys are configured.
func (c Config) SubjectsOn() bool {
	return c.Subjects.ThreadSeparator != "" || c.Subjects.ThreadMetadataKey != "" || len(c.Subjects.Prefixes()) > 0
}

// MaxGroupCommit bounds MEMVAULT_GROUP_COMMIT: more writes per
// transaction only lengthen the wait of the first.
const MaxGroupCommit = 1024

// Defaults used by Default and FromEnv.
const (
	DefaultDBPath     = "memvault.db"
	DefaultEmbeddings = "hash:256"
	DefaultCacheSize  = 10000
)

// Default is the embedded configuration: a SQLite file, the offline hashing
// embedder, no encryption until a key is set.
func Default() Config {
	return Config{
		DBPath:             DefaultDBPath,
		Embeddings:         DefaultEmbeddings,
		IndexFields:        []string{"$"},
		Distance:           store.Cosine,
		CacheSize:          DefaultCacheSize,
		EmbeddingCacheSize: DefaultCacheSize,
	}
}

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return FromLookup(os.LookupEnv) }

// FromLookup reads the configuration through lookup (os.LookupEnv in
// FromEnv), so tests and embedding programs can supply their own.
// An invalid value is an error naming the variable and what it accepts.
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	c := Default()
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	dsnFrom := ""
	if v, ok := get("MEMVAULT_DSN"); ok {
		c.DSN, dsnFrom = v, "MEMVAULT_DSN"
	} else if v, ok := get("DATABASE_URL"); ok {
		c.DSN, dsnFrom = v, "DATABASE_URL"
	}
	if v, ok := get("MEMVAULT_DB"); ok {
		switch dsnFrom {
		case "MEMVAULT_DSN":
			// The server would be used and the file ignored.
			return c, fmt.Errorf("%w: MEMVAULT_DB and MEMVAULT_DSN both name a database: set MEMVAULT_DB for a SQLite file or MEMVAULT_DSN for a server, not both", ErrInvalidSetting)
		case "DATABASE_URL":
			// A variable named for memvault wins over the generic one,
			// which another program of the environment may have set
			// (PaaS set it for the application's own database).
			c.DSN = ""
		}
		c.DBPath = v
	}
	if v, ok := get("MEMVAULT_SCHEMA"); ok {
		c.Schema = v
	}
	if v, ok := lookup("LANGGRAPH_AES_KEY"); ok && v != "" {
		c.Keys.Primary = v // not trimmed: LangGraph uses the raw string
	}
	if v, ok := lookup("LANGGRAPH_AES_KEY_PREVIOUS"); ok {
		// Entries are kept as written: crypto applies one rule to both
		// variables (white space around a raw key is an error, not trimmed).
		for _, k := range strings.Split(v, ",") {
			if strings.TrimSpace(k) != "" {
				c.Keys.Previous = append(c.Keys.Previous, k)
			}
		}
	}
	if v, ok := get("MEMVAULT_ENCRYPTION"); ok {
		m, err := ParseEncryption(v)
		if err != nil {
			return c, err
		}
		c.Encryption = m
	}
	if v, ok := get("MEMVAULT_ALLOW_PLAINTEXT"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_ALLOW_PLAINTEXT=%q: want true or false", v)
		}
		c.DangerousAllowPlaintext = b
	}
	if v, ok := get("MEMVAULT_DANGEROUS_SKIP_KEY_CHECK"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_DANGEROUS_SKIP_KEY_CHECK=%q: want true or false", v)
		}
		c.DangerousSkipKeyCheck = b
	}
	if v, ok := get("MEMVAULT_DANGEROUSLY_ACCEPT_UNBOUND_AES"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_DANGEROUSLY_ACCEPT_UNBOUND_AES=%q: want true or false", v)
		}
		c.DangerouslyAcceptUnboundAES = b
	}
	if v, ok := get("MEMVAULT_EMBEDDINGS"); ok {
		c.Embeddings = v
	}
	if v, ok := get("OPENAI_API_KEY"); ok {
		c.OpenAIAPIKey = v
	}
	if v, ok := get("OPENAI_BASE_URL"); ok {
		c.OpenAIBaseURL = v
	}
	if v, ok := get("MEMVAULT_INDEX_FIELDS"); ok {
		c.IndexFields = nil
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				c.IndexFields = append(c.IndexFields, f)
			}
		}
	}
	if v, ok := get("MEMVAULT_DISTANCE"); ok {
		c.Distance = store.Distance(v)
	}
	for name, dst := range map[string]*int{"MEMVAULT_CACHE_SIZE": &c.CacheSize, "MEMVAULT_EMBEDDING_CACHE_SIZE": &c.EmbeddingCacheSize} {
		if v, ok := get(name); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return c, invalidf("config: %s=%q: want a whole number >= 0", name, v)
			}
			*dst = n
		}
	}
	if v, ok := get("MEMVAULT_TTL_DEFAULT"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, invalidf("config: MEMVAULT_TTL_DEFAULT=%q: want a duration >= 0 such as 24h or 90m (0: no expiry)", v)
		}
		c.TTL.DefaultTTL = d
	}
	if v, ok := get("MEMVAULT_TTL_REFRESH_ON_READ"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_TTL_REFRESH_ON_READ=%q: want true or false", v)
		}
		c.TTL.DisableRefreshOnRead = !b
	}
	if v, ok := get("MEMVAULT_TTL_SWEEP_INTERVAL"); ok {
		if strings.EqualFold(v, "off") {
			c.TTL.SweepInterval = -1
		} else {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, invalidf("config: MEMVAULT_TTL_SWEEP_INTERVAL=%q: want a duration > 0 such as 5m, or off", v)
			}
			c.TTL.SweepInterval = d
		}
	}
	if v, ok := get("MEMVAULT_RETENTION_IDLE_TTL"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, invalidf("config: MEMVAULT_RETENTION_IDLE_TTL=%q: want a duration >= 0 such as 720h (0: keep idle threads)", v)
		}
		c.Retention.IdleTTL = d
	}
	if v, ok := get("MEMVAULT_RETENTION_KEEP_LATEST"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, invalidf("config: MEMVAULT_RETENTION_KEEP_LATEST=%q: want an integer >= 0 such as 50 (0: keep every checkpoint)", v)
		}
		c.Retention.KeepLatest = n
	}
	if v, ok := get("MEMVAULT_RETENTION_SWEEP_INTERVAL"); ok {
		if strings.EqualFold(v, "off") {
			c.RetentionSweepInterval = -1
		} else {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, invalidf("config: MEMVAULT_RETENTION_SWEEP_INTERVAL=%q: want a duration > 0 such as 1h, or off", v)
			}
			c.RetentionSweepInterval = d
		}
	}
	if v, ok := get("MEMVAULT_DURABILITY"); ok {
		m, err := durable.ParseMode(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_DURABILITY=%q: want sync, async or exit", v)
		}
		c.Durability = m
	}
	if v, ok := get("MEMVAULT_GROUP_COMMIT"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n == 1 || n > MaxGroupCommit {
			return c, invalidf("config: MEMVAULT_GROUP_COMMIT=%q: want 0 (off) or a number of writes from 2 to %d", v, MaxGroupCommit)
		}
		c.GroupCommit = n
	}
	if v, ok := get("MEMVAULT_SQLITE_FULL_SYNC"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_SQLITE_FULL_SYNC=%q: want true or false", v)
		}
		c.SQLiteFullSync = b
	}
	if v, ok := lookup("MEMVAULT_SUBJECT_THREAD_SEPARATOR"); ok && v != "" {
		c.Subjects.ThreadSeparator = v // not trimmed: " " is a separator
	}
	if v, ok := get("MEMVAULT_SUBJECT_THREAD_METADATA"); ok {
		c.Subjects.ThreadMetadataKey = v
	}
	if v, ok := get("MEMVAULT_SUBJECT_NAMESPACE"); ok {
		bad := func(err error) error {
			return invalidf("config: MEMVAULT_SUBJECT_NAMESPACE=%q: want comma-separated dotted namespace prefixes such as users or adk.*.sessions,adk.*.memory: %w", v, err)
		}
		for _, p := range strings.Split(v, ",") {
			prefix := strings.Split(strings.TrimSpace(p), ".")
			if err := store.Namespace(prefix).Validate(); err != nil {
				return c, bad(err)
			}
			if c.Subjects.NamespacePrefix == nil {
				c.Subjects.NamespacePrefix = prefix
			} else {
				c.Subjects.NamespacePrefixes = append(c.Subjects.NamespacePrefixes, prefix)
			}
		}
		if err := c.Subjects.Validate(); err != nil {
			return c, bad(err)
		}
	}
	if v, ok := get("MEMVAULT_KEY_TABLE"); ok {
		c.KeyTable = v
	}
	if v, ok := get("MEMVAULT_KEY_DSN"); ok {
		c.KeyDSN = v
	}
	if v, ok := get("MEMVAULT_AUDIT"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, invalidf("config: MEMVAULT_AUDIT=%q: want true or false", v)
		}
		c.Audit = b
	}
	if v, ok := get("MEMVAULT_AUDIT_TABLE"); ok {
		c.AuditTable = v
	}
	if v, ok := get("MEMVAULT_VERSIONS"); ok {
		switch v {
		case "string":
			c.Versions = checkpointer.VersionString
		case "int":
			c.Versions = checkpointer.VersionInt
		default:
			return c, invalidf("config: MEMVAULT_VERSIONS=%q: want string or int", v)
		}
		c.VersionsSet = true
	}
	return c, c.Validate()
}

// ParseEncryption parses a MEMVAULT_ENCRYPTION value.
func ParseEncryption(v string) (EncryptionMode, error) {
	switch m := EncryptionMode(strings.ToLower(v)); m {
	case EncryptionEnvelope, EncryptionLangGraph, EncryptionOff:
		return m, nil
	}
	return "", invalidf("config: MEMVAULT_ENCRYPTION=%q: want envelope, langgraph or off", v)
}

// EffectiveEncryption is the mode in force: Encryption when set, otherwise
// envelope with a key and off without.
func (c Config) EffectiveEncryption() EncryptionMode {
	if c.Encryption != "" {
		return c.Encryption
	}
	if c.Keys.Primary != "" {
		return EncryptionEnvelope
	}
	return EncryptionOff
}

// Validate checks values that do not need I/O. Key sizes are checked by
// vault.Open (with LangGraph's error text).
func (c Config) Validate() error {
	if c.DSN == "" && c.DBPath == "" {
		return missingf("config: MEMVAULT_DB is empty and no MEMVAULT_DSN/DATABASE_URL is set")
	}
	// A connection string in a path or schema setting would be opened as
	// a file (and printed whole in the error, password included) or, a
	// libpq keyword/value string holding no "/", created as one.
	for _, p := range []struct{ name, value, instead string }{
		{"MEMVAULT_DB", c.DBPath, "MEMVAULT_DSN"},
		{"MEMVAULT_KEY_TABLE", c.KeyTable, "MEMVAULT_KEY_DSN"},
		{"MEMVAULT_AUDIT_TABLE", c.AuditTable, "MEMVAULT_DSN"},
	} {
		if looksLikeDSN(p.value) {
			return invalidf("config: %s holds a connection string, not a file path or schema name: a server goes in %s (the value is not printed: it may hold a password)", p.name, p.instead)
		}
	}
	if m := c.EffectiveEncryption(); m != EncryptionOff && c.Keys.Primary == "" {
		return missingf("config: MEMVAULT_ENCRYPTION=%s needs LANGGRAPH_AES_KEY", m)
	}
	if c.Audit && c.Keys.Primary == "" {
		return missingf("config: MEMVAULT_AUDIT needs LANGGRAPH_AES_KEY (the trail is chained under a key derived from it)")
	}
	if err := c.Subjects.Validate(); err != nil {
		return invalidf("config: MEMVAULT_SUBJECT_NAMESPACE: %w", err)
	}
	if c.SubjectsOn() && c.EffectiveEncryption() != EncryptionEnvelope {
		return missingf("config: per-subject keys (MEMVAULT_SUBJECT_THREAD_SEPARATOR, MEMVAULT_SUBJECT_NAMESPACE) need MEMVAULT_ENCRYPTION=envelope and LANGGRAPH_AES_KEY, not %s", c.EffectiveEncryption())
	}
	if _, _, err := parseEmbeddings(c.Embeddings); err != nil {
		return err
	}
	switch c.Distance {
	case "", store.Cosine, store.L2, store.InnerProduct:
	default:
		return invalidf("config: MEMVAULT_DISTANCE=%q: want cosine, l2 or inner_product", c.Distance)
	}
	return nil
}

// urlShape matches a URL scheme other than SQLite's file: (checked apart);
// keywordPair a libpq keyword=value pair, and passwordPair its password's.
var (
	urlShape     = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://`)
	keywordPair  = regexp.MustCompile(`(?i)(^|\s)(host|hostaddr|dbname|user|password|port|sslmode|service)\s*=`)
	passwordPair = regexp.MustCompile(`(?i)(^|\s)(password|sslpassword)\s*=`)
)

// looksLikeDSN reports whether v, given as a file path or schema name, is a
// connection string: a URL, a password pair, or two keyword pairs or more
// (one alone, "host=web1/agent.db", is a path a data lake might use).
func looksLikeDSN(v string) bool {
	// Quotes a shell would have removed (Docker's --env-file, systemd's
	// EnvironmentFile keep them) and spaces around do not make it a path.
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	if strings.HasPrefix(strings.ToLower(v), "file:") {
		return false
	}
	return urlShape.MatchString(v) || passwordPair.MatchString(v) || len(keywordPair.FindAllStringIndex(v, 2)) == 2
}

// parseEmbeddings splits MEMVAULT_EMBEDDINGS into provider and rest.
func parseEmbeddings(v string) (provider string, args []string, err error) {
	if v == "" {
		v = DefaultEmbeddings
	}
	parts := strings.Split(v, ":")
	bad := invalidf("config: MEMVAULT_EMBEDDINGS=%q: want hash:<dims>, openai:<model>[:<dims>] or none", v)
	switch parts[0] {
	case "none":
		if len(parts) != 1 {
			return "", nil, bad
		}
	case "hash":
		if len(parts) != 2 {
			return "", nil, bad
		}
		if n, err := strconv.Atoi(parts[1]); err != nil || n < 2 || n > 16000 {
			return "", nil, bad
		}
	case "openai":
		if len(parts) < 2 || len(parts) > 3 || parts[1] == "" {
			return "", nil, bad
		}
		if len(parts) == 3 {
			if n, err := strconv.Atoi(parts[2]); err != nil || n < 1 || n > 16000 {
				return "", nil, bad
			}
		}
	default:
		return "", nil, bad
	}
	return parts[0], parts[1:], nil
}

// GenerateKey returns a fresh 256-bit key in the "base64:" form that
// LANGGRAPH_AES_KEY accepts in memvault. Python LangGraph reads keys as raw
// characters; use GenerateRawKey for a key both can read.
func GenerateKey() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// GenerateRawKey returns 32 random characters from a 64-character
// alphabet (192 bits of entropy): a key Python LangGraph reads as it is.
func GenerateRawKey() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[b[i]&63]
	}
	return string(b[:]), nil
}
