package sqlitesaver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/memvaulttest/testkeys"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
)

func openSaver(t testing.TB, path string, opts Options) *Saver {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// encrypted returns memvault's default encrypting serializer under a fixed
// test key.
func encrypted(t testing.TB) serde.Serializer {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func runConformance(t *testing.T, sd func(t testing.TB) serde.Serializer) {
	t.Run("Memory", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			return openSaver(t, ":memory:", Options{Serde: sd(t)})
		})
	})
	t.Run("File", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			return openSaver(t, filepath.Join(t.TempDir(), "cp.db"), Options{Serde: sd(t)})
		})
	})
}

func TestConformance(t *testing.T) {
	runConformance(t, func(testing.TB) serde.Serializer { return nil })
}

func TestConformanceEncrypted(t *testing.T) {
	runConformance(t, encrypted)
}

// TestConformanceWrapped runs the suite on a *sql.DB the caller opened.
func TestConformanceWrapped(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "w.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := New(t.Context(), db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// put stores a one-channel checkpoint and returns its config.
func put(t testing.TB, s *Saver, cfg checkpointer.Config, step int, value any) checkpointer.Config {
	t.Helper()
	ver := s.NextVersion("")
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
		ChannelValues:   map[string]any{"messages": value},
		ChannelVersions: map[string]string{"messages": ver},
		VersionsSeen:    map[string]map[string]string{},
	}
	out, err := s.Put(context.Background(), cfg, cp, checkpointer.Metadata{"step": step}, map[string]string{"messages": ver})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncryptedAtRest checks that no value is stored in plaintext and that
// a row copied to another thread does not decrypt there.
func TestEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, filepath.Join(t.TempDir(), "enc.db"), Options{Serde: encrypted(t)})
	const secret = "patient has condition X"
	cfg := put(t, s, checkpointer.Config{ThreadID: "t1"}, 1, secret)
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "c", Value: secret}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	db := s.d.db.Reader()
	for _, q := range []string{`SELECT type, blob FROM checkpoint_blobs`, `SELECT type, blob FROM checkpoint_writes`} {
		var typ string
		var blob []byte
		if err := db.QueryRow(q).Scan(&typ, &blob); err != nil {
			t.Fatal(err)
		}
		if typ != "json+mvgcm" || bytes.Contains(blob, []byte("condition")) {
			t.Fatalf("%s: type %q, blob %q: not encrypted", q, typ, blob)
		}
	}

	// Move the blob row to another thread: the associated data no longer
	// matches and loading fails with the generic error.
	if _, err := s.d.db.Writer().Exec(`UPDATE checkpoint_blobs SET thread_id = 't2'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.db.Writer().Exec(`INSERT INTO checkpoints SELECT 't2', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t2"}); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("GetTuple of a moved row = %v, want ErrDecrypt", err)
	}
}

// TestCopyThreadReencrypts checks that a copied thread decrypts under its
// new id and leaves the source intact.
func TestCopyThreadReencrypts(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, ":memory:", Options{Serde: encrypted(t)})
	cfg := put(t, s, checkpointer.Config{ThreadID: "src"}, 1, "v1")
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "c", Value: "w"}}, "task", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"src", "dst"} {
		tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil || tp == nil {
			t.Fatalf("GetTuple(%s) = %v, %v", thread, tp, err)
		}
		if tp.Checkpoint.ChannelValues["messages"] != "v1" || len(tp.PendingWrites) != 1 || tp.PendingWrites[0].Value != "w" {
			t.Fatalf("thread %s: values %v writes %v", thread, tp.Checkpoint.ChannelValues, tp.PendingWrites)
		}
	}
	var n int
	if err := s.d.db.Reader().QueryRow(`SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'dst' AND task_path = 'p'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("copied write keeps task_path: %d, %v", n, err)
	}
}

// TestPruneCollectsBlobs checks that pruning removes the values no kept
// checkpoint references and keeps those the latest one still uses.
func TestPruneCollectsBlobs(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, ":memory:", Options{})
	thread := checkpointer.Config{ThreadID: "t"}
	// Channel a changes every step; channel b is written once.
	var cfg checkpointer.Config = thread
	var va, vb string
	for step := range 5 {
		va = s.NextVersion(va)
		nv := map[string]string{"a": va}
		vals := map[string]any{"a": step}
		if step == 0 {
			vb = s.NextVersion("")
			nv["b"] = vb
			vals["b"] = "kept"
		}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), TS: time.Now(),
			ChannelValues: vals, ChannelVersions: map[string]string{"a": va, "b": vb}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, nil, nv); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Prune(ctx, []string{"t"}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	var blobs, cps int
	s.d.db.Reader().QueryRow(`SELECT count(*) FROM checkpoint_blobs`).Scan(&blobs)
	s.d.db.Reader().QueryRow(`SELECT count(*) FROM checkpoints`).Scan(&cps)
	if blobs != 2 || cps != 1 {
		t.Fatalf("after prune: %d blobs, %d checkpoints; want 2, 1", blobs, cps)
	}
	tp, err := s.GetTuple(ctx, thread)
	if err != nil || tp == nil {
		t.Fatal(tp, err)
	}
	if tp.Checkpoint.ChannelValues["b"] != "kept" {
		t.Fatalf("value written by a pruned ancestor lost: %v", tp.Checkpoint.ChannelValues)
	}
}

// TestSharedFile checks that a saver opened twice on one file shares the
// connections and sees the other's writes.
func TestSharedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openSaver(t, path, Options{})
	b := openSaver(t, path, Options{})
	if a.d.db.Writer() != b.d.db.Writer() {
		t.Fatal("two savers on one file do not share the writer")
	}
	cfg := put(t, a, checkpointer.Config{ThreadID: "t"}, 1, "x")
	tp, err := b.GetTuple(context.Background(), cfg)
	if err != nil || tp == nil || tp.Checkpoint.ChannelValues["messages"] != "x" {
		t.Fatalf("GetTuple via the other saver = %v, %v", tp, err)
	}
}

// TestListPushdownMatchesGo checks the SQL pre-filter against the exact Go
// containment rule on values SQLite's JSON functions treat specially.
func TestListPushdownMatchesGo(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, ":memory:", Options{})
	mds := []checkpointer.Metadata{
		{"k": true}, {"k": 1}, {"k": 1.0}, {"k": 1.5}, {"k": "1"}, {"k": nil},
		{"k": []any{1, 2}}, {"k": map[string]any{"a": 1}}, {"other": 1}, {"k": false}, {"k": 0},
		{`we"ird`: "x"}, {"k": "true"},
	}
	for i, md := range mds {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now()}
		if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, md, nil); err != nil {
			t.Fatal(err)
		}
	}
	filters := []map[string]any{
		{"k": true}, {"k": false}, {"k": 1}, {"k": int64(1)}, {"k": 1.5}, {"k": "1"}, {"k": nil},
		{"k": []any{1}}, {"k": map[string]any{}}, {"k": 0}, {`we"ird`: "x"}, {"k": "true"}, {"missing": nil},
	}
	for _, f := range filters {
		want := 0
		for _, md := range mds {
			stored := core.SerializableMetadata(checkpointer.Config{}, md)
			if core.MetadataContains(roundTrip(t, stored), f) {
				want++
			}
		}
		for _, limit := range []int{0, 1} {
			got := 0
			for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{Filter: f, Limit: limit}) {
				if err != nil {
					t.Fatal(err)
				}
				if !core.MetadataContains(tp.Metadata, f) {
					t.Fatalf("filter %v yielded %v", f, tp.Metadata)
				}
				got++
			}
			w := want
			if limit > 0 {
				w = min(w, limit)
			}
			if got != w {
				t.Errorf("filter %v limit %d: %d tuples, want %d", f, limit, got, w)
			}
		}
	}
}

func roundTrip(t *testing.T, md checkpointer.Metadata) checkpointer.Metadata {
	t.Helper()
	s := openSaver(t, ":memory:", Options{})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now()}
	cfg, err := s.Put(context.Background(), checkpointer.Config{ThreadID: "rt"}, cp, md, nil)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := s.GetTuple(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tp.Metadata
}

// TestConformanceSubjects runs the suite with per-subject keys: each
// thread's values sealed under the data key of the subject its id names.
func TestConformanceSubjects(t *testing.T) {
	runConformance(t, func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) })
}

func TestBackgroundSweep(t *testing.T) {
	checkpointertest.RunBackgroundSweep(t, func(t *testing.T, p checkpointer.RetentionPolicy, every time.Duration, on func(checkpointer.SweepReport, error)) (checkpointer.Saver, func() error) {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "bg.db"), Options{Retention: p, SweepInterval: every, OnSweep: on})
		if err != nil {
			t.Fatal(err)
		}
		return s, s.Close
	})
}

// TestOptions runs the shared options check through both constructors.
func TestOptions(t *testing.T) {
	t.Run("Open", func(t *testing.T) {
		checkpointertest.RunOptions(t, func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy) (checkpointer.Saver, error) {
			return Open(t.Context(), ":memory:", Options{VersionStyle: style, Retention: p})
		})
	})
	t.Run("New", func(t *testing.T) {
		checkpointertest.RunOptions(t, func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy) (checkpointer.Saver, error) {
			db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "cp.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return New(t.Context(), db, Options{VersionStyle: style, Retention: p})
		})
	})
}

// TestForeignDocuments: documents another LangGraph writer stored read as
// on every other backend (checkpointertest.RunForeignDocuments).
func TestForeignDocuments(t *testing.T) {
	checkpointertest.RunForeignDocuments(t, func(t *testing.T) (checkpointer.Saver, checkpointertest.StoreDocument) {
		s := openSaver(t, filepath.Join(t.TempDir(), "foreign.db"), Options{})
		return s, func(t *testing.T, thread, ns, id, parent string, doc []byte) {
			err := s.d.db.Write(t.Context(), func(tx *sql.Tx) error {
				_, err := tx.ExecContext(t.Context(), `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
					VALUES (?, ?, ?, nullif(?, ''), ?, '{}')`, thread, ns, id, parent, string(doc))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}
