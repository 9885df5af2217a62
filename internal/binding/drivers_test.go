package binding_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// driver is one SQL backend under test: an encrypting saver and store over
// the same database, and a way to run SQL on it behind their backs.
type driver struct {
	saver checkpointer.Saver
	store store.Store
	exec  func(t *testing.T, stmt string) int64 // rows affected
}

func drivers(t *testing.T) map[string]func(t *testing.T) driver {
	ctx := context.Background()
	return map[string]func(t *testing.T) driver{
		"sqlite": func(t *testing.T) driver {
			path := filepath.Join(t.TempDir(), "m.db")
			sv, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: encrypted(t).Serializer()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sv.Close() })
			st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Serde: encrypted(t).Serializer()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return driver{sv, st, func(t *testing.T, stmt string) int64 {
				r, err := db.ExecContext(ctx, stmt)
				if err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
				n, _ := r.RowsAffected()
				return n
			}}
		},
		"postgres": func(t *testing.T) driver {
			pool, _ := pgtest.Schema(t)
			sv, err := pgsaver.New(pool, pgsaver.Options{Serde: encrypted(t).Serializer()})
			if err != nil {
				t.Fatal(err)
			}
			if err := sv.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			st, err := pgstore.New(pool, pgstore.Options{Serde: encrypted(t).Serializer()})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			return driver{sv, st, func(t *testing.T, stmt string) int64 {
				tag, err := pool.Exec(ctx, stmt)
				if err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
				return tag.RowsAffected()
			}}
		},
	}
}

// where renders column = 'value' conditions (test values hold no quotes).
func where(kv ...string) string {
	var parts []string
	for i := 0; i < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%s = '%s'", kv[i], kv[i+1]))
	}
	return strings.Join(parts, " AND ")
}

// copyCipher overwrites the ciphertext of the row at dst with the one at
// src, in table's ciphertext columns: a row moved by someone with write
// access to the database but not the key.
func copyCipher(t *testing.T, d driver, table string, cols []string, dst, src string) {
	t.Helper()
	var sets []string
	for _, c := range cols {
		sets = append(sets, fmt.Sprintf("%s = (SELECT %s FROM %s WHERE %s)", c, c, table, src))
	}
	if n := d.exec(t, fmt.Sprintf("UPDATE %s SET %s WHERE %s", table, strings.Join(sets, ", "), dst)); n != 1 {
		t.Fatalf("moved %d rows, want 1", n)
	}
}

// TestMovedRowsFailOnEveryDriver moves the ciphertext of every kind of
// stored value to a location that differs in one coordinate, for every
// coordinate, on every SQL driver, and reads it there: each read fails with
// serde.ErrDecrypt. (The in-memory saver's rows are not reachable from
// outside; checkpointer/memsaver's TestEncryptedValuesAreBoundToTheirLocation
// moves them in its own test.) Reading the untouched location first shows
// the fixture is readable, so a failure is the binding's doing.
func TestMovedRowsFailOnEveryDriver(t *testing.T) {
	const cp1, cp2 = "1f0c0000-0000-6000-8000-000000000001", "1f0c0000-0000-6000-8000-000000000002"
	blobCols := []string{"type", "blob"}
	type cpCase struct {
		name     string
		table    string
		dst, src func(a, b string) string // a: the thread read, b: the other thread
		relabel  func(a string) string    // instead of dst/src: an UPDATE of a coordinate
		read     string                   // checkpoint read back
	}
	cases := []cpCase{
		{name: "blob/thread", table: "checkpoint_blobs", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "a", "version", "1")
			},
			src: func(a, b string) string {
				return where("thread_id", b, "checkpoint_ns", "", "channel", "a", "version", "1")
			}},
		{name: "blob/namespace", table: "checkpoint_blobs", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "a", "version", "1")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "child", "channel", "a", "version", "1")
			}},
		{name: "blob/channel", table: "checkpoint_blobs", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "a", "version", "1")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "b", "version", "1")
			}},
		{name: "blob/version", table: "checkpoint_blobs", read: cp2,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "a", "version", "2")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "channel", "a", "version", "1")
			}},
		{name: "write/thread", table: "checkpoint_writes", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			},
			src: func(a, b string) string {
				return where("thread_id", b, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			}},
		{name: "write/namespace", table: "checkpoint_writes", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "child", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			}},
		{name: "write/checkpoint", table: "checkpoint_writes", read: cp2,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp2, "task_id", "t1", "idx", "0")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			}},
		{name: "write/task", table: "checkpoint_writes", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t2", "idx", "0")
			}},
		{name: "write/idx", table: "checkpoint_writes", read: cp1,
			dst: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			},
			src: func(a, b string) string {
				return where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "1")
			}},
		{name: "write/channel", table: "checkpoint_writes", read: cp1,
			relabel: func(a string) string {
				return "UPDATE checkpoint_writes SET channel = 'relabelled' WHERE " +
					where("thread_id", a, "checkpoint_ns", "", "checkpoint_id", cp1, "task_id", "t1", "idx", "0")
			}},
	}
	for name, open := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			d := open(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					a, b := strings.ReplaceAll(c.name, "/", "-")+"-a", strings.ReplaceAll(c.name, "/", "-")+"-b"
					for _, thread := range []string{a, b} {
						for _, ns := range []string{"", "child"} {
							writeFixture(t, d.saver, thread, ns, cp1, cp2)
						}
					}
					read := checkpointer.Config{ThreadID: a, CheckpointID: c.read}
					if _, err := d.saver.GetTuple(t.Context(), read); err != nil {
						t.Fatalf("fixture does not read back: %v", err)
					}
					if c.relabel != nil {
						if n := d.exec(t, c.relabel(a)); n != 1 {
							t.Fatalf("relabelled %d rows, want 1", n)
						}
					} else {
						copyCipher(t, d, c.table, blobCols, c.dst(a, b), c.src(a, b))
					}
					if _, err := d.saver.GetTuple(t.Context(), read); !errors.Is(err, serde.ErrDecrypt) {
						t.Fatalf("GetTuple after the move: %v, want serde.ErrDecrypt", err)
					}
				})
			}
			for _, c := range []struct{ name, dstNS, dstKey, srcNS, srcKey string }{
				{"item/namespace", "users.alice", "k", "users.bob", "k"},
				{"item/key", "users.alice", "k", "users.alice", "k2"},
			} {
				t.Run(c.name, func(t *testing.T) {
					ctx := t.Context()
					pfx := strings.ReplaceAll(c.name, "/", "-")
					for _, it := range [][2]string{{c.dstNS, c.dstKey}, {c.srcNS, c.srcKey}} {
						ns := append(store.Namespace{pfx}, strings.Split(it[0], ".")...)
						if err := d.store.Put(ctx, ns, it[1], map[string]any{"secret": it[0] + "/" + it[1]}); err != nil {
							t.Fatal(err)
						}
					}
					dstNS := append(store.Namespace{pfx}, strings.Split(c.dstNS, ".")...)
					if _, err := d.store.Get(ctx, dstNS, c.dstKey); err != nil {
						t.Fatalf("fixture does not read back: %v", err)
					}
					copyCipher(t, d, "store", []string{"value"},
						where("prefix", pfx+"."+c.dstNS, "key", c.dstKey), where("prefix", pfx+"."+c.srcNS, "key", c.srcKey))
					if _, err := d.store.Get(ctx, dstNS, c.dstKey); !errors.Is(err, serde.ErrDecrypt) {
						t.Fatalf("Get after the move: %v, want serde.ErrDecrypt", err)
					}
				})
			}
		})
	}
}

// writeFixture stores, in thread and ns, checkpoint cp1 with channels a and
// b at version "1" and writes (t1, 0), (t1, 1), (t2, 0) to channel c, and
// checkpoint cp2 with channel a at version "2" and write (t1, 0).
func writeFixture(t *testing.T, sv checkpointer.Saver, thread, ns, cp1, cp2 string) {
	t.Helper()
	ctx := t.Context()
	vals := func(tag string) map[string]any {
		return map[string]any{"a": thread + ns + "a" + tag, "b": thread + ns + "b" + tag}
	}
	c1 := &checkpointer.Checkpoint{V: 4, ID: cp1, ChannelValues: vals("1"),
		ChannelVersions: map[string]string{"a": "1", "b": "1"}, VersionsSeen: map[string]map[string]string{}}
	cfg1, err := sv.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, c1, nil, map[string]string{"a": "1", "b": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sv.PutWrites(ctx, cfg1, []checkpointer.Write{{Channel: "c", Value: "w-t1-0"}, {Channel: "c", Value: "w-t1-1"}}, "t1", ""); err != nil {
		t.Fatal(err)
	}
	if err := sv.PutWrites(ctx, cfg1, []checkpointer.Write{{Channel: "c", Value: "w-t2-0"}}, "t2", ""); err != nil {
		t.Fatal(err)
	}
	c2 := &checkpointer.Checkpoint{V: 4, ID: cp2, ChannelValues: map[string]any{"a": thread + ns + "a2", "b": thread + ns + "b1"},
		ChannelVersions: map[string]string{"a": "2", "b": "1"}, VersionsSeen: map[string]map[string]string{}}
	cfg2, err := sv.Put(ctx, cfg1, c2, nil, map[string]string{"a": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sv.PutWrites(ctx, cfg2, []checkpointer.Write{{Channel: "c", Value: "w2"}}, "t1", ""); err != nil {
		t.Fatal(err)
	}
}
