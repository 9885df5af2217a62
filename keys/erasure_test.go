package keys_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var subjects = keys.Subjects{ThreadSeparator: ":", NamespacePrefix: []string{"users"}}

// hierarchy returns a Hierarchy over the test master key, with its key
// table in a SQLite file of its own (apart from the data).
func hierarchy(t *testing.T, keyFile string) *keys.Hierarchy {
	t.Helper()
	tb, err := sqlitekeys.Open(t.Context(), keyFile)
	must(t, err)
	t.Cleanup(func() { tb.Close() })
	h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: tb, Subjects: subjects})
	must(t, err)
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// backend is one data backend: a saver and (for the SQL ones) a store on
// the same data, with a way to back the data up and restore it.
type backend struct {
	name    string
	open    func(t *testing.T, ser serde.Serializer) (checkpointer.Saver, store.Store)
	backup  func(t *testing.T) // copies the data aside
	restore func(t *testing.T) // puts the copy back
}

func backends(t *testing.T) []backend {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.db")
	var mem checkpointer.Saver
	pool, schema := pgtest.Schema(t)
	return []backend{
		{
			name: "memory",
			open: func(t *testing.T, ser serde.Serializer) (checkpointer.Saver, store.Store) {
				if mem == nil {
					s, err := memsaver.New(memsaver.Options{Serde: ser})
					must(t, err)
					mem = s
				}
				return mem, nil
			},
		},
		{
			name: "sqlite",
			open: func(t *testing.T, ser serde.Serializer) (checkpointer.Saver, store.Store) {
				s, err := sqlitesaver.Open(t.Context(), data, sqlitesaver.Options{Serde: ser})
				must(t, err)
				st, err := sqlitestore.Open(t.Context(), data, sqlitestore.Options{Serde: ser})
				must(t, err)
				t.Cleanup(func() { s.Close(); st.Close() })
				return s, st
			},
			backup:  func(t *testing.T) { copyFile(t, data, data+".bak") },
			restore: func(t *testing.T) { copyFile(t, data+".bak", data) },
		},
		{
			name: "postgres",
			open: func(t *testing.T, ser serde.Serializer) (checkpointer.Saver, store.Store) {
				s, err := pgsaver.New(pool, pgsaver.Options{Serde: ser})
				must(t, err)
				must(t, s.Setup(t.Context()))
				st, err := pgstore.New(pool, pgstore.Options{Serde: ser})
				must(t, err)
				must(t, st.Setup(t.Context()))
				return s, st
			},
			backup: func(t *testing.T) {
				t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`_bak" CASCADE`) })
				pgCopy(t, pool, schema, schema+"_bak")
			},
			restore: func(t *testing.T) { pgCopy(t, pool, schema+"_bak", schema) },
		},
	}
}

// copyFile copies a closed SQLite database (checkpointed: no WAL) over dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	must(t, err)
	defer in.Close()
	out, err := os.Create(dst)
	must(t, err)
	_, err = io.Copy(out, in)
	must(t, err)
	must(t, out.Close())
	for _, ext := range []string{"-wal", "-shm"} {
		_ = os.Remove(dst + ext)
	}
}

// pgCopy replaces the data tables of schema to with those of from, as a
// restored dump would.
func pgCopy(t *testing.T, pool *pgxpool.Pool, from, to string) {
	t.Helper()
	ctx := t.Context()
	_, err := pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+to+`"`)
	must(t, err)
	for _, tb := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes", "store"} {
		_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS "`+to+`"."`+tb+`" (LIKE "`+from+`"."`+tb+`" INCLUDING ALL)`)
		must(t, err)
		_, err = pool.Exec(ctx, `TRUNCATE "`+to+`"."`+tb+`"`)
		must(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO "`+to+`"."`+tb+`" SELECT * FROM "`+from+`"."`+tb+`"`)
		must(t, err)
	}
}

// write stores a checkpoint with a pending write in thread and, when st is
// not nil, a memory under ns.
func write(t *testing.T, s checkpointer.Saver, st store.Store, thread string, ns store.Namespace, secret string) {
	t.Helper()
	ctx := t.Context()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"messages": secret}, ChannelVersions: map[string]string{"messages": s.NextVersion("")}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions)
	must(t, err)
	must(t, s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: secret + " (pending)"}}, "task-1", ""))
	if st != nil {
		must(t, st.Put(ctx, ns, "profile", map[string]any{"note": secret}))
	}
}

// read returns the checkpoint value, the pending write and the memory of
// thread / ns, or the first error.
func read(t *testing.T, s checkpointer.Saver, st store.Store, thread string, ns store.Namespace) (string, error) {
	t.Helper()
	ctx := t.Context()
	tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil {
		return "", err
	}
	if tup == nil || len(tup.PendingWrites) != 1 {
		t.Fatalf("thread %s: %+v", thread, tup)
	}
	got, _ := tup.Checkpoint.ChannelValues["messages"].(string)
	if st != nil {
		it, err := st.Get(ctx, ns, "profile")
		if err != nil {
			return "", err
		}
		if it == nil || it.Value["note"] != got {
			t.Fatalf("memory of %v: %+v", ns, it)
		}
	}
	return got, nil
}

// TestForgetEveryBackend: two subjects' checkpoints, pending writes and
// memories; one subject's keys destroyed → its data refuses to decrypt
// (one generic error) while the other's reads normally, also from a copy
// of the data taken before and restored after.
func TestForgetEveryBackend(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			keyFile := filepath.Join(t.TempDir(), "keys.db")
			h := hierarchy(t, keyFile)
			s, st := b.open(t, h)
			carol, dave := store.Namespace{"users", "carol", "prefs"}, store.Namespace{"users", "dave", "prefs"}
			write(t, s, st, "carol:chat", carol, "carol takes insulin")
			write(t, s, st, "dave:chat", dave, "dave is allergic to peanuts")
			if got, err := read(t, s, st, "carol:chat", carol); err != nil || got != "carol takes insulin" {
				t.Fatalf("carol before forget: %q, %v", got, err)
			}
			if b.backup != nil {
				if c, ok := s.(io.Closer); ok {
					must(t, c.Close())
				}
				if c, ok := st.(io.Closer); ok {
					must(t, c.Close())
				}
				b.backup(t)
				s, st = b.open(t, h)
			}
			// Read once more, so that every cache holds carol's values.
			if _, err := read(t, s, st, "carol:chat", carol); err != nil {
				t.Fatal(err)
			}

			r, err := h.DestroyKeys(t.Context(), "carol")
			must(t, err)
			if len(r.KeyIDs) != 1 || !h.VerifyReceipt(r) {
				t.Fatalf("receipt %+v", r)
			}
			r.Subject = "mallory"
			if h.VerifyReceipt(r) {
				t.Fatal("an edited receipt verified")
			}

			check := func(t *testing.T, s checkpointer.Saver, st store.Store) {
				t.Helper()
				if _, err := read(t, s, nil, "carol:chat", nil); !errors.Is(err, serde.ErrDecrypt) {
					t.Fatalf("carol's checkpoint after forget: %v, want serde.ErrDecrypt", err)
				}
				if st != nil {
					if it, err := st.Get(t.Context(), carol, "profile"); !errors.Is(err, serde.ErrDecrypt) {
						t.Fatalf("carol's memory after forget: %v, %v, want serde.ErrDecrypt", it, err)
					}
				}
				if got, err := read(t, s, st, "dave:chat", dave); err != nil || got != "dave is allergic to peanuts" {
					t.Fatalf("dave after carol's forget: %q, %v", got, err)
				}
			}
			check(t, s, st)
			// A new process (cold key cache) reads the same.
			check(t, s, st)
			if b.restore != nil {
				if c, ok := s.(io.Closer); ok {
					must(t, c.Close())
				}
				if c, ok := st.(io.Closer); ok {
					must(t, c.Close())
				}
				b.restore(t)
				s2, st2 := b.open(t, hierarchy(t, keyFile))
				check(t, s2, st2)
			}
		})
	}
}

// TestReencryptMovesLegacyValues: values a subject had before per-subject
// keys were turned on are sealed under the master key and still read;
// until `keys reencrypt` moves them to the subject's key, destroying that
// key does not erase them. After it, it does.
func TestReencryptMovesLegacyValues(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	data := filepath.Join(dir, "data.db")
	b := backend{open: func(t *testing.T, ser serde.Serializer) (checkpointer.Saver, store.Store) {
		s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: ser})
		must(t, err)
		st, err := sqlitestore.Open(ctx, data, sqlitestore.Options{Serde: ser})
		must(t, err)
		t.Cleanup(func() { s.Close(); st.Close() })
		return s, st
	}}
	carol := store.Namespace{"users", "carol", "prefs"}
	s, st := b.open(t, testkeys.Encrypting(t)) // before subjects
	write(t, s, st, "carol:chat", carol, "carol's old note")

	h := hierarchy(t, filepath.Join(dir, "keys.db"))
	s, st = b.open(t, h)
	if got, err := read(t, s, st, "carol:chat", carol); err != nil || got != "carol's old note" {
		t.Fatalf("legacy value under subjects: %q, %v", got, err)
	}
	sv, err := s.(checkpointer.Reencrypter).Reencrypt(ctx, reencrypt.Options{})
	must(t, err)
	si, err := st.(store.Reencrypter).Reencrypt(ctx, reencrypt.Options{})
	must(t, err)
	if sv.Rewritten != 2 || si.Rewritten != 1 {
		t.Fatalf("re-encryption rewrote %d checkpoint values and %d items, want 2 and 1", sv.Rewritten, si.Rewritten)
	}
	_, err = h.DestroyKeys(ctx, "carol")
	must(t, err)
	if _, err := read(t, s, nil, "carol:chat", nil); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("moved checkpoint after forget: %v, want ErrDecrypt", err)
	}
	if _, err := st.Get(ctx, carol, "profile"); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("moved memory after forget: %v, want ErrDecrypt", err)
	}
}

// TestForgetByMetadata: subjects named by the checkpoint metadata
// ("user_id"): a thread is bound at its first checkpoint, its writes and
// reads follow the binding, a copy stays the subject's, a thread without
// the key is nobody's, a checkpoint naming another subject is refused; one
// subject forgotten refuses to decrypt while the others read — on every
// backend.
func TestForgetByMetadata(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			tb, err := sqlitekeys.Open(ctx, filepath.Join(t.TempDir(), "keys.db"))
			must(t, err)
			t.Cleanup(func() { tb.Close() })
			h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: tb, Subjects: keys.Subjects{ThreadMetadataKey: "user_id"}})
			must(t, err)
			s, _ := b.open(t, h)
			put := func(thread string, md checkpointer.Metadata, secret string) error {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"messages": secret}, ChannelVersions: map[string]string{"messages": s.NextVersion("")}}
				cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions)
				if err != nil {
					return err
				}
				return s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: secret + " (pending)"}}, "task-1", "")
			}
			must(t, put("visit-1", checkpointer.Metadata{"user_id": "carol"}, "carol takes insulin"))
			must(t, put("visit-2", checkpointer.Metadata{"user_id": "dave"}, "dave is allergic"))
			must(t, put("system", checkpointer.Metadata{"step": 1}, "nobody's"))
			if err := put("visit-1", checkpointer.Metadata{"user_id": "dave"}, "moved?"); err == nil || !strings.Contains(err.Error(), `belongs to subject "carol"`) {
				t.Fatalf("a checkpoint naming another subject: %v", err)
			}
			if c, ok := s.(checkpointer.Copier); ok {
				must(t, c.CopyThread(ctx, "visit-1", "visit-1-copy"))
			}
			if ths, _ := h.SubjectThreads(ctx, "carol"); len(ths) < 1 || ths[0] != "visit-1" {
				t.Fatalf("carol's threads: %q", ths)
			}

			_, err = h.DestroyKeys(ctx, "carol")
			must(t, err)
			for _, th := range []string{"visit-1", "visit-1-copy"} {
				if _, ok := s.(checkpointer.Copier); !ok && th == "visit-1-copy" {
					continue
				}
				if _, err := read(t, s, nil, th, nil); !errors.Is(err, serde.ErrDecrypt) {
					t.Fatalf("carol's %s after forget: %v, want ErrDecrypt", th, err)
				}
			}
			for th, want := range map[string]string{"visit-2": "dave is allergic", "system": "nobody's"} {
				if got, err := read(t, s, nil, th, nil); err != nil || got != want {
					t.Fatalf("%s after carol's forget: %q, %v", th, got, err)
				}
			}
			// A new process (cold caches) reads the bindings from the key table.
			h2, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: tb, Subjects: keys.Subjects{ThreadMetadataKey: "user_id"}})
			must(t, err)
			s2, _ := b.open(t, h2)
			if b.name == "memory" {
				return // the memory saver lives in the first "process" only
			}
			if _, err := read(t, s2, nil, "visit-1", nil); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("carol in a new process: %v", err)
			}
			if got, err := read(t, s2, nil, "visit-2", nil); err != nil || got != "dave is allergic" {
				t.Fatalf("dave in a new process: %q, %v", got, err)
			}
		})
	}
}
