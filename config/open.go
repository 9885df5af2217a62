package config

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	pgsaver "github.com/memvault/memvault/checkpointer/postgres"
	sqlitesaver "github.com/memvault/memvault/checkpointer/sqlite"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/embeddings/openai"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	pgstore "github.com/memvault/memvault/store/postgres"
	sqlitestore "github.com/memvault/memvault/store/sqlite"
)

// Backend names.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Handle is a wired saver and store on one database. Close it when done.
type Handle struct {
	// Backend is BackendSQLite or BackendPostgres.
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
	Embedder embeddings.Embedder
	// Pool is the PostgreSQL pool (nil for SQLite), for callers that want
	// to run their own statements or use the …Tx methods.
	Pool *pgxpool.Pool

	closers []func() error
	dbPath  string // SQLite file
	schema  string // PostgreSQL schema ("" = search_path)
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
// not under the primary key (see checkpointer.Reencrypter).
func (h *Handle) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (saver, st checkpointer.ReencryptStats, err error) {
	if h.Keyring == nil {
		return saver, st, fmt.Errorf("config: encryption is off (set LANGGRAPH_AES_KEY)")
	}
	r, ok := h.Saver.(checkpointer.Reencrypter)
	if !ok {
		return saver, st, fmt.Errorf("config: the %s saver cannot re-encrypt", h.Backend)
	}
	if saver, err = r.Reencrypt(ctx, opt); err != nil {
		return saver, st, err
	}
	rs, ok := h.Store.(store.Reencrypter)
	if !ok {
		return saver, st, fmt.Errorf("config: the %s store cannot re-encrypt", h.Backend)
	}
	st, err = rs.Reencrypt(ctx, opt)
	return saver, st, err
}

// Keyring parses the configured keys exactly as LangGraph reads
// LANGGRAPH_AES_KEY (raw characters, 16/24/32 bytes, LangGraph's error
// texts), plus memvault's "base64:" and "hex:" forms. It returns nil, nil
// when no key is set.
func (c Config) Keyring() (*crypto.Keyring, error) {
	if c.Keys.Primary == "" {
		if len(c.Keys.Previous) > 0 {
			return nil, fmt.Errorf("config: LANGGRAPH_AES_KEY_PREVIOUS is set but LANGGRAPH_AES_KEY is not")
		}
		return nil, nil
	}
	prev := strings.Join(c.Keys.Previous, ",")
	return crypto.KeyringFromLookup(func(name string) (string, bool) {
		switch name {
		case "LANGGRAPH_AES_KEY":
			return c.Keys.Primary, true
		case "LANGGRAPH_AES_KEY_PREVIOUS":
			return prev, prev != ""
		}
		return "", false
	})
}

// Serializer returns the value serializer the configuration asks for:
// JsonPlus, or JsonPlus inside an Encrypted serializer (memvault's
// envelope, or LangGraph's "aes" format written with AES-GCM).
func (c Config) Serializer() (serde.Serializer, error) {
	s, _, err := c.serializer()
	return s, err
}

func (c Config) serializer() (serde.Serializer, *crypto.Keyring, error) {
	mode := c.EffectiveEncryption()
	if mode == EncryptionOff {
		return serde.JSONPlus{}, nil, nil
	}
	ring, err := c.Keyring()
	if err != nil {
		return nil, nil, err
	}
	if ring == nil {
		return nil, nil, fmt.Errorf("config: MEMVAULT_ENCRYPTION=%s needs LANGGRAPH_AES_KEY", mode)
	}
	opts := c.readOptions()
	if mode == EncryptionLangGraph {
		opts = append(opts, serde.WithLangGraphAES(crypto.ModeGCM))
	}
	enc, err := serde.NewEncrypted(serde.JSONPlus{}, ring, opts...)
	if err != nil {
		return nil, nil, err
	}
	return enc, ring, nil
}

// readOptions are the serializer options for what encrypted serializers
// accept when reading.
func (c Config) readOptions() []serde.EncryptedOption {
	var opts []serde.EncryptedOption
	if c.AllowPlaintext {
		opts = append(opts, serde.WithPlaintextReads())
	}
	if c.DangerouslyAcceptUnboundAES {
		opts = append(opts, serde.WithDangerousUnboundAESReads())
	}
	return opts
}

// storeSerializer is the store's serializer (see Handle.StoreSerde): nil
// without a keyring, else the envelope whatever the mode.
func (c Config) storeSerializer(ring *crypto.Keyring) (serde.Serializer, error) {
	if ring == nil {
		return nil, nil
	}
	return serde.NewEncrypted(serde.JSONPlus{}, ring, c.readOptions()...)
}

// Embedder returns the configured embedder wrapped in an LRU cache, or nil
// for "none".
func (c Config) Embedder() (embeddings.Embedder, error) {
	provider, args, err := parseEmbeddings(c.Embeddings)
	if err != nil {
		return nil, err
	}
	var e embeddings.Embedder
	switch provider {
	case "none":
		return nil, nil
	case "hash":
		n, _ := strconv.Atoi(args[0])
		e = embeddings.NewHashing(n)
	case "openai":
		o := openai.Options{Model: args[0], APIKey: c.OpenAIAPIKey, BaseURL: c.OpenAIBaseURL}
		if len(args) == 2 {
			o.Dimensions, _ = strconv.Atoi(args[1])
		}
		oe, err := openai.New(o)
		if err != nil {
			return nil, fmt.Errorf("config: MEMVAULT_EMBEDDINGS=%q: %w", c.Embeddings, err)
		}
		e = oe
	}
	if c.EmbeddingCacheSize > 0 {
		ce, err := embeddings.NewCached(e, c.EmbeddingCacheSize)
		if err != nil {
			return nil, err
		}
		e = ce
	}
	return e, nil
}

func (c Config) indexConfig(e embeddings.Embedder) *store.IndexConfig {
	if e == nil {
		return nil
	}
	fields := c.IndexFields
	if len(fields) == 0 {
		fields = []string{"$"}
	}
	dist := c.Distance
	if dist == "" {
		dist = store.Cosine
	}
	return &store.IndexConfig{Dims: e.Dims(), Embedder: e, Fields: fields, Distance: dist}
}

// ttlConfig is the store's TTL configuration: a copy of c.TTL, so that the
// store never shares it with the caller's Config.
func (c Config) ttlConfig() *store.TTLConfig {
	t := c.TTL
	return &t
}

// Open connects to the configured database, creates or upgrades its
// tables, and returns the wired saver and store.
func Open(ctx context.Context, c Config) (*Handle, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ser, ring, err := c.serializer()
	if err != nil {
		return nil, err
	}
	emb, err := c.Embedder()
	if err != nil {
		return nil, err
	}
	sser, err := c.storeSerializer(ring)
	if err != nil {
		return nil, err
	}
	h := &Handle{Serde: ser, StoreSerde: sser, Keyring: ring, Embedder: emb}
	ok := false
	defer func() {
		if !ok {
			_ = h.Close()
		}
	}()
	if c.DSN != "" {
		err = openPostgres(ctx, c, h)
	} else {
		err = openSQLite(ctx, c, h)
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return h, nil
}

func openSQLite(ctx context.Context, c Config, h *Handle) error {
	h.Backend, h.dbPath = BackendSQLite, c.DBPath
	sv, err := sqlitesaver.Open(ctx, c.DBPath, sqlitesaver.Options{Serde: h.Serde, VersionStyle: c.Versions})
	if err != nil {
		return err
	}
	h.Saver = sv
	h.closers = append(h.closers, sv.Close)
	st, err := sqlitestore.Open(ctx, c.DBPath, sqlitestore.Options{Index: c.indexConfig(h.Embedder), TTL: c.ttlConfig(), Serde: h.StoreSerde})
	if err != nil {
		return err
	}
	h.Store = st
	h.closers = append(h.closers, st.Close)
	return nil
}

func openPostgres(ctx context.Context, c Config, h *Handle) error {
	h.Backend, h.schema = BackendPostgres, c.Schema
	pool, err := pgxpool.New(ctx, c.DSN)
	if err != nil {
		return fmt.Errorf("config: MEMVAULT_DSN: %w", err)
	}
	h.Pool = pool
	h.closers = append(h.closers, func() error { pool.Close(); return nil })
	sv, err := pgsaver.New(pool, pgsaver.Options{Schema: c.Schema, Serde: h.Serde, VersionStyle: c.Versions})
	if err != nil {
		return err
	}
	if err := sv.Setup(ctx); err != nil {
		return err
	}
	h.Saver = sv
	cache := c.CacheSize
	if cache == 0 {
		cache = -1
	}
	st, err := pgstore.New(pool, pgstore.Options{Schema: c.Schema, Index: c.indexConfig(h.Embedder), TTL: c.ttlConfig(), Serde: h.StoreSerde, CacheSize: cache})
	if err != nil {
		return err
	}
	h.closers = append(h.closers, st.Close)
	if err := st.Setup(ctx); err != nil {
		return err
	}
	h.Store = st
	return nil
}

// KeyInfo describes one configured key without revealing it.
type KeyInfo struct {
	Role  string `json:"role"`
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
}

// KeysReport is what `memvault keys check` prints.
type KeysReport struct {
	Mode           EncryptionMode `json:"mode"`
	Keys           []KeyInfo      `json:"keys"`
	AllowPlaintext bool           `json:"allow_plaintext"`
}

// DescribeKeys parses the configured keys (failing as Open would) and
// reports the mode, key ids and sizes, never key bytes.
func DescribeKeys(c Config) (KeysReport, error) {
	r := KeysReport{Mode: c.EffectiveEncryption(), Keys: []KeyInfo{}, AllowPlaintext: c.AllowPlaintext}
	ring, err := c.Keyring()
	if err != nil {
		return r, err
	}
	if ring == nil {
		return r, nil
	}
	for i, k := range ring.Keys() {
		role := "previous"
		if i == 0 {
			role = "primary"
		}
		r.Keys = append(r.Keys, KeyInfo{Role: role, ID: k.ID().String(), Bytes: k.Len()})
	}
	return r, nil
}
