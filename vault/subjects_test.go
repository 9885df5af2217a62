package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestSubjectsFromEnv(t *testing.T) {
	c, err := config.FromLookup(lookup(map[string]string{
		"LANGGRAPH_AES_KEY":                 testkeys.Key,
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":",
		"MEMVAULT_SUBJECT_NAMESPACE":        "tenants.users",
		"MEMVAULT_KEY_TABLE":                "/secure/keys.db",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.SubjectsOn() || c.Subjects.ThreadSeparator != ":" || strings.Join(c.Subjects.NamespacePrefix, ".") != "tenants.users" || c.KeyTable != "/secure/keys.db" {
		t.Fatalf("config %+v", c)
	}
	for env, want := range map[string]string{
		"MEMVAULT_SUBJECT_NAMESPACE=a..b":       "MEMVAULT_SUBJECT_NAMESPACE",
		"MEMVAULT_ENCRYPTION=langgraph":         "need MEMVAULT_ENCRYPTION=envelope",
		"MEMVAULT_ENCRYPTION=off":               "need MEMVAULT_ENCRYPTION=envelope",
		"LANGGRAPH_AES_KEY=":                    "need MEMVAULT_ENCRYPTION=envelope",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR=:,x": "", // a separator of any text is fine
	} {
		name, value, _ := strings.Cut(env, "=")
		e := map[string]string{"LANGGRAPH_AES_KEY": testkeys.Key, "MEMVAULT_SUBJECT_THREAD_SEPARATOR": ":", name: value}
		_, err := config.FromLookup(lookup(e))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", env, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", env, err, want)
		}
	}
}

// TestForget: per-subject keys on SQLite and PostgreSQL through Open; Forget
// destroys carol's keys and deletes her threads and memories, with a
// receipt; dave's data reads; a copy of the data taken before the forget
// and restored after it does not decrypt for carol.
func TestForget(t *testing.T) {
	dir := t.TempDir()
	sqliteCfg := config.Default()
	sqliteCfg.DBPath = filepath.Join(dir, "agent.db")
	pgCfg := config.Default()
	pgCfg.DSN = pgtest.SchemaDSN(t)
	// Data in SQLite, keys in PostgreSQL (MEMVAULT_KEY_DSN).
	apart := config.Default()
	apart.DBPath = filepath.Join(dir, "apart.db")
	apart.KeyDSN = pgtest.SchemaDSN(t)
	// Each case's PostgreSQL key table in a schema of its own.
	pgCfg.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
	apart.KeyTable = pgCfg.KeyTable + "_apart"
	for name, c := range map[string]config.Config{"sqlite": sqliteCfg, "postgres": pgCfg, "sqlite+postgres-keys": apart} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c.Keys.Primary = testkeys.Key
			c.Subjects.ThreadSeparator = ":"
			c.Subjects.NamespacePrefix = []string{"users"}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for _, who := range []string{"carol", "dave"} {
				for _, thread := range []string{who + ":visit-1", who + ":visit-2"} {
					cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": who + " secret"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
					if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
						t.Fatal(err)
					}
				}
				if err := h.Store.Put(ctx, store.Namespace{"users", who, "prefs"}, "diet", map[string]any{"note": who + " secret"}); err != nil {
					t.Fatal(err)
				}
			}
			backup := takeBackup(t, h, c)

			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 2 || r.Items != 1 || len(r.KeyIDs) != 1 || !h.Keys.VerifyReceipt(r) {
				t.Fatalf("receipt %+v", r)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:visit-1"}); tup != nil || err != nil {
				t.Fatalf("carol's thread after forget: %v, %v", tup, err)
			}
			if it, err := h.Store.Get(ctx, store.Namespace{"users", "carol", "prefs"}, "diet"); it != nil || err != nil {
				t.Fatalf("carol's memory after forget: %v, %v", it, err)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:visit-2"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "dave secret" {
				t.Fatalf("dave after carol's forget: %v, %v", tup, err)
			}
			if _, err := h.Forget(ctx, ""); err == nil {
				t.Fatal("forgetting the empty subject succeeded")
			}

			// The old copy of the data comes back.
			restoreBackup(t, h, c, backup)
			h2, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			if _, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:visit-1"}); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("carol's restored thread: %v, want ErrDecrypt", err)
			}
			if _, err := h2.Store.Get(ctx, store.Namespace{"users", "carol", "prefs"}, "diet"); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("carol's restored memory: %v, want ErrDecrypt", err)
			}
			if tup, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:visit-1"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "dave secret" {
				t.Fatalf("dave's restored thread: %v, %v", tup, err)
			}
		})
	}
}

// takeBackup copies the data (not the key table): the SQLite file, or the
// PostgreSQL data tables into a schema aside.
func takeBackup(t *testing.T, h *Handle, c config.Config) string {
	t.Helper()
	ctx := context.Background()
	if h.Pool == nil {
		bak := c.DBPath + ".bak"
		db := openRaw(t, c.DBPath)
		defer db.Close()
		if _, err := db.ExecContext(ctx, `VACUUM INTO '`+bak+`'`); err != nil {
			t.Fatal(err)
		}
		return bak
	}
	for _, tb := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes", "store"} {
		if _, err := h.Pool.Exec(ctx, `CREATE TABLE bak_`+tb+` AS SELECT * FROM `+tb); err != nil {
			t.Fatal(err)
		}
	}
	return "bak_"
}

// restoreBackup closes h and puts the backup back over the data.
func restoreBackup(t *testing.T, h *Handle, c config.Config, backup string) {
	t.Helper()
	ctx := context.Background()
	if h.Pool == nil {
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(backup)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		out, err := os.Create(c.DBPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(c.DBPath + "-wal")
		_ = os.Remove(c.DBPath + "-shm")
		return
	}
	for _, tb := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes", "store"} {
		if _, err := h.Pool.Exec(ctx, `DELETE FROM `+tb+`; INSERT INTO `+tb+` SELECT * FROM `+backup+tb); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSubjectsInMemory: an in-memory SQLite database keeps its key table
// and audit trail in memory too, leaving no file behind.
func TestSubjectsInMemory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c := config.Default()
	c.DBPath = ":memory:"
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Audit = true
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(context.Background(), store.Namespace{"a"}, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(context.Background(), "carol"); err != nil {
		t.Fatal(err)
	}
	if n, err := h.Audit.Verify(context.Background()); err != nil || n != 2 { // the put and the erasure
		t.Fatalf("audit: %d, %v", n, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Fatalf("files left behind: %v", files)
	}
}

// TestForgetByMetadataThroughConfig: MEMVAULT_SUBJECT_THREAD_METADATA
// binds threads by their metadata; Forget deletes exactly the bound threads.
func TestForgetByMetadataThroughConfig(t *testing.T) {
	ctx := context.Background()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":                      filepath.Join(t.TempDir(), "m.db"),
		"LANGGRAPH_AES_KEY":                testkeys.Key,
		"MEMVAULT_SUBJECT_THREAD_METADATA": "user_id",
	}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for thread, user := range map[string]string{"a": "carol", "b": "carol", "c": "dave"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"x": user}, ChannelVersions: map[string]string{"x": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"user_id": user}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	r, err := h.Forget(ctx, "carol")
	if err != nil || r.Threads != 2 || !h.Keys.VerifyReceipt(r) {
		t.Fatalf("forget: %+v, %v", r, err)
	}
	for thread, gone := range map[string]bool{"a": true, "b": true, "c": false} {
		tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil || (tup == nil) != gone {
			t.Fatalf("thread %s after forget: %v, %v", thread, tup, err)
		}
	}
	// The bindings stay, as tombstones: a stale writer of carol's thread
	// — here a new process, whose caches know nothing — gets no key for it
	// (before, it made one and its write was acknowledged, out of reach of
	// the next forget).
	if ths, _ := h.Keys.SubjectThreads(ctx, "carol"); len(ths) != 2 {
		t.Fatalf("bindings after forget: %q, want carol's two as tombstones", ths)
	}
	h2, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(9), ChannelValues: map[string]any{"x": "stale"}, ChannelVersions: map[string]string{"x": h2.Saver.NextVersion("")}}
	if _, err := h2.Saver.Put(ctx, checkpointer.Config{ThreadID: "a"}, cp, nil, cp.ChannelVersions); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a stale write of carol's thread after forget: %v, want keys.ErrSubjectErased", err)
	}
	if tup, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "a"}); tup != nil || err != nil {
		t.Fatalf("the stale write was stored: %v, %v", tup, err)
	}
	// Readmitted, carol may start again, on the same thread ids.
	if err := h2.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if ths, _ := h2.Keys.SubjectThreads(ctx, "carol"); len(ths) != 0 {
		t.Fatalf("bindings after readmit: %q", ths)
	}
	if _, err := h2.Saver.Put(ctx, checkpointer.Config{ThreadID: "a"}, cp, checkpointer.Metadata{"user_id": "carol"}, cp.ChannelVersions); err != nil {
		t.Fatalf("carol's thread after readmit: %v", err)
	}
}

// TestAnonymousThenLoginIsErased: a thread that ran anonymously, then
// learned its user (subjects by metadata), is erased with the user whole —
// its checkpoints and pending writes from before the login too, also in a
// copy of the data taken before the login. Before thread keys, those rows
// stayed under the master key and a restored backup showed them.
func TestAnonymousThenLoginIsErased(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]config.Config{"sqlite": {DBPath: filepath.Join(dir, "m.db")}}
	if !testing.Short() {
		cases["postgres"] = config.Config{DSN: pgtest.SchemaDSN(t), KeyTable: fmt.Sprintf("keys_login_%d", time.Now().UnixNano())}
	}
	for name, base := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := config.Default()
			c.DBPath, c.DSN, c.KeyTable = base.DBPath, base.DSN, base.KeyTable
			c.Keys.Primary = testkeys.Key
			c.Subjects.ThreadMetadataKey = "user_id"
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { h.Close() }()
			put := func(thread string, step int, value string, md checkpointer.Metadata, parent string) string {
				t.Helper()
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), ChannelValues: map[string]any{"notes": value},
					ChannelVersions: map[string]string{"notes": fmt.Sprintf("%032d.0", step+1)}}
				next, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, cp.ChannelVersions)
				if err != nil {
					t.Fatal(err)
				}
				return next.CheckpointID
			}
			// Anonymous: no user_id yet.
			id1 := put("visit", 1, "anonymous: allergic to peanuts", checkpointer.Metadata{"source": "input"}, "")
			if err := h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "visit", CheckpointID: id1}, []checkpointer.Write{{Channel: "notes", Value: "takes insulin"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			put("other", 1, "dave's note", checkpointer.Metadata{"user_id": "dave"}, "")
			backup := takeBackup(t, h, c) // before the login
			// The login: the thread is carol's from now on.
			put("visit", 2, "carol logged in", checkpointer.Metadata{"user_id": "carol"}, id1)
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "visit", CheckpointID: id1}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "anonymous: allergic to peanuts" || len(tup.PendingWrites) != 1 {
				t.Fatalf("the anonymous checkpoint after the login: %+v, %v", tup, err)
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil || r.Threads != 1 || len(r.KeyIDs) == 0 {
				t.Fatalf("forget: %+v, %v", r, err)
			}
			restoreBackup(t, h, c, backup)
			h, err = Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "visit", CheckpointID: id1}); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("the anonymous checkpoint, restored from before the login: %v, want ErrDecrypt", err)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "other"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "dave's note" {
				t.Fatalf("dave's thread restored: %v, %v", tup, err)
			}
		})
	}
}

// TestUnreachableKeyDSNNamed: when the key database cannot be reached, the
// error names MEMVAULT_KEY_DSN, redacted — not MEMVAULT_KEY_TABLE, which
// sent an operator to the wrong setting, and never the password.
func TestUnreachableKeyDSNNamed(t *testing.T) {
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.KeyDSN = "postgres://keys:hunter2secret@127.0.0.1:1/keys?connect_timeout=2"
	h, err := Open(context.Background(), c)
	if err == nil {
		h.Close()
		t.Fatal("Open with an unreachable MEMVAULT_KEY_DSN succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "MEMVAULT_KEY_DSN") || strings.Contains(msg, "MEMVAULT_KEY_TABLE") || strings.Contains(msg, "hunter2secret") {
		t.Fatalf("Open = %q: want MEMVAULT_KEY_DSN named, redacted", msg)
	}
}
