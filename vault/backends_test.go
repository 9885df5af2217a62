package vault

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// memBackend is a registered backend on the real in-memory saver (and
// store, for "memstore://" DSNs): one saver per DSN, kept across opens so
// that a reopen under another key reads what the first open wrote.
var memBackend = struct {
	sync.Mutex
	savers map[string]*memsaver.InMemorySaver
	opens  int
}{savers: map[string]*memsaver.InMemorySaver{}}

func init() {
	open := func(withStore bool) func(context.Context, config.Config, BackendOptions) (*BackendConn, error) {
		return func(_ context.Context, c config.Config, o BackendOptions) (*BackendConn, error) {
			memBackend.Lock()
			defer memBackend.Unlock()
			memBackend.opens++
			s := memBackend.savers[c.DSN]
			if s == nil {
				var err error
				if s, err = memsaver.New(memsaver.Options{}); err != nil {
					return nil, err
				}
				memBackend.savers[c.DSN] = s
			}
			conn := &BackendConn{Saver: s.WithSerde(o.Serde),
				Migrations: func(context.Context) ([]Migration, error) {
					return []Migration{{Table: "mem", Indexes: []string{"by_thread"}}}, nil
				}}
			if withStore {
				conn.Store = func(_ context.Context, so StoreOptions) (store.Store, error) {
					return memstore.New(memstore.Options{Index: so.Index, TTL: so.TTL})
				}
			}
			return conn, nil
		}
	}
	RegisterBackend("memsaver", Backend{Name: "memtest", Open: open(false)})
	RegisterBackend("MemStore", Backend{Name: "memtest", Open: open(true)})
}

func memConfig(dsn, key string) config.Config {
	c := config.Default()
	c.DSN = dsn
	c.Keys.Primary = key
	if key == "" {
		c.Encryption = config.EncryptionOff
	}
	return c
}

// TestRegisteredBackend opens a backend registered with RegisterBackend
// through Config.DSN: its saver under the configured serializer, no store
// (ErrNoStore), the census and compaction refused (ErrUnsupported), its
// migrations reported, another key refused at Open.
func TestRegisteredBackend(t *testing.T) {
	ctx := context.Background()
	const key, other = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	h, err := Open(ctx, memConfig("memsaver://one", key))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Backend != "memtest" || h.Store != nil || h.Pool != nil {
		t.Fatalf("handle: backend %q, store %v, pool %v", h.Backend, h.Store, h.Pool)
	}
	if err := h.NeedStore(); !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "the memtest backend has a checkpointer but no long-term memory store") {
		t.Fatalf("NeedStore = %v, want ErrNoStore naming the backend", err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"secret": "launch codes"},
		ChannelVersions: map[string]string{"secret": "1"}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Census(ctx); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "key census") {
		t.Fatalf("Census = %v, want ErrUnsupported", err)
	}
	if _, err := h.DangerousCompact(ctx); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "compaction on the memtest backend") {
		t.Fatalf("DangerousCompact = %v, want ErrUnsupported", err)
	}
	ms, err := h.Migrations(ctx)
	if err != nil || len(ms) != 1 || ms[0].Indexes[0] != "by_thread" {
		t.Fatalf("Migrations = %v, %v", ms, err)
	}

	// Sealed under the configured key: a plaintext configuration cannot
	// read it, and another key is refused at Open.
	for _, k := range []string{"", other} {
		_, err := Open(ctx, memConfig("memsaver://one", k))
		if !errors.Is(err, ErrKeyNotLoaded) {
			t.Fatalf("Open with key %q = %v, want ErrKeyNotLoaded", k, err)
		}
	}
	h2, err := Open(ctx, memConfig("memsaver://one", key))
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	tup, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	if err != nil || tup == nil || tup.Checkpoint.ChannelValues["secret"] != "launch codes" {
		t.Fatalf("GetTuple = %+v, %v", tup, err)
	}
}

// TestRegisteredBackendStoreHook: a backend whose BackendConn has a
// Store hook gets a store with the configured index and TTL.
func TestRegisteredBackendStoreHook(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, memConfig("memstore://one", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.NeedStore(); err != nil {
		t.Fatal(err)
	}
	ns := store.Namespace{"users", "alice"}
	if err := h.Store.Put(ctx, ns, "k", map[string]any{"text": "prefers email"}); err != nil {
		t.Fatal(err)
	}
	res, err := h.Store.Search(ctx, ns, store.SearchOptions{Query: "email", Limit: 1})
	if err != nil || len(res) != 1 || res[0].Score == nil {
		t.Fatalf("Search = %+v, %v: want a scored result (the index reached the store)", res, err)
	}
}

// TestRegisteredBackendRefuses: per-subject keys, the audit trail and the
// SQL savers' settings (group commit, SQLite full sync) are refused before
// the backend is opened, with an error naming the feature.
func TestRegisteredBackendRefuses(t *testing.T) {
	ctx := context.Background()
	const key = "0123456789abcdef0123456789abcdef"
	audit := memConfig("memsaver://refused", key)
	audit.Audit = true
	subjects := memConfig("memsaver://refused", key)
	subjects.Subjects.ThreadSeparator = ":"
	grouped := memConfig("memsaver://refused", key)
	grouped.GroupCommit = 16
	fullSync := memConfig("memsaver://refused", key)
	fullSync.SQLiteFullSync = true
	for want, c := range map[string]config.Config{
		"the audit trail (MEMVAULT_AUDIT)":     audit,
		"per-subject keys":                     subjects,
		"group commit (MEMVAULT_GROUP_COMMIT)": grouped,
		"MEMVAULT_SQLITE_FULL_SYNC":            fullSync,
	} {
		memBackend.Lock()
		before := memBackend.opens
		memBackend.Unlock()
		_, err := Open(ctx, c)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "memtest backend") {
			t.Errorf("Open = %v, want ErrUnsupported naming %q", err, want)
		}
		memBackend.Lock()
		if memBackend.opens != before {
			t.Errorf("%s: the backend was opened before the refusal", want)
		}
		memBackend.Unlock()
	}
}

// TestUnregisteredScheme: a MongoDB or Redis DSN in a program that did not
// import their wiring package names the package, instead of reaching pgx
// (which reported "cannot parse `mongodb://…`").
func TestUnregisteredScheme(t *testing.T) {
	ctx := context.Background()
	for dsn, pkg := range map[string]string{
		"mongodb://127.0.0.1:1/db":  "backends/mongodb/mongovault",
		"redis://127.0.0.1:1/0":     "backends/redis/redisvault",
		"cassandra://127.0.0.1:1/x": "want postgres://",
	} {
		c := config.Default()
		c.DSN, c.Encryption = dsn, config.EncryptionOff
		_, err := Open(ctx, c)
		if !errors.Is(err, ErrBackendNotRegistered) || !strings.Contains(err.Error(), pkg) {
			t.Errorf("Open(%s) = %v, want ErrBackendNotRegistered naming %s", dsn, err, pkg)
		}
	}
}

// TestRegisterBackendPanics: PostgreSQL's schemes, a scheme registered
// twice and an incomplete Backend are program errors.
func TestRegisterBackendPanics(t *testing.T) {
	open := func(context.Context, config.Config, BackendOptions) (*BackendConn, error) { return nil, nil }
	for name, fn := range map[string]func(){
		"postgres":  func() { RegisterBackend("postgres", Backend{Name: "x", Open: open}) },
		"twice":     func() { RegisterBackend("memsaver", Backend{Name: "x", Open: open}) },
		"no open":   func() { RegisterBackend("x-no-open", Backend{Name: "x"}) },
		"no scheme": func() { RegisterBackend("", Backend{Name: "x", Open: open}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestDSNScheme(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u@h/db": "postgres", "MongoDB+SRV://h/x": "mongodb+srv", "host=h dbname=x": "",
		"": "", "host=h options='-c a=b://'": "", "redis+cluster://h:1": "redis+cluster",
	} {
		if got := DSNScheme(dsn); got != want {
			t.Errorf("DSNScheme(%q) = %q, want %q", dsn, got, want)
		}
	}
}
