package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// erasedCarol opens c, stores a thread and a memory of carol and of dave,
// erases carol and closes: the database a second process then opens.
func erasedCarol(t *testing.T, c config.Config) {
	t.Helper()
	ctx := context.Background()
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, who := range []string{"carol", "dave"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": who + " takes insulin"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: who + ":1"}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(ctx, store.Namespace{"users", who}, "diet", map[string]any{"v": "no peanuts"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
}

// TestSubjectMappingPinned: a database records the subject mapping it was
// opened with, and a process with another one is refused
// (ErrSubjectsChanged). Before, the subject_keys mark said only that some
// mapping was on: a cron job without MEMVAULT_SUBJECT_NAMESPACE (with
// MEMVAULT_EMBEDDINGS=none, so no embedder tag refused it) stored
// ("users", "carol")/diet after carol's erasure under the master key, and
// one with another thread separator stored thread carol:2 — both read back
// by every process (found by the session 21 review). The same mapping
// spelled another way opens; MEMVAULT_DANGEROUS_SKIP_KEY_CHECK opens
// anyway.
func TestSubjectMappingPinned(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	erasedCarol(t, c)

	for name, edit := range map[string]func(*keys.Subjects){
		"namespace prefix not exported": func(s *keys.Subjects) { s.NamespacePrefix = nil },
		"another thread separator":      func(s *keys.Subjects) { s.ThreadSeparator = "/" },
		"thread metadata instead":       func(s *keys.Subjects) { s.ThreadSeparator, s.ThreadMetadataKey = "", "user_id" },
		"one more prefix":               func(s *keys.Subjects) { s.NamespacePrefixes = [][]string{{"adk", "*", "memory"}} },
	} {
		other := c
		other.Subjects = keys.Subjects{ThreadSeparator: c.Subjects.ThreadSeparator, NamespacePrefix: []string{"users"}} // a copy edit may change
		edit(&other.Subjects)
		h, err := Open(ctx, other)
		if err == nil {
			h.Close()
		}
		if !errors.Is(err, ErrSubjectsChanged) {
			t.Errorf("%s: Open = %v, want ErrSubjectsChanged", name, err)
		}
	}

	same := c
	same.Subjects.NamespacePrefix, same.Subjects.NamespacePrefixes = nil, [][]string{{"users"}, {"users"}}
	h, err := Open(ctx, same)
	if err != nil {
		t.Fatalf("Open with the same mapping spelled another way: %v", err)
	}
	h.Close()

	skip := c
	skip.Subjects.NamespacePrefix = nil
	skip.DangerousSkipKeyCheck = true
	if h, err = Open(ctx, skip); err != nil {
		t.Fatalf("Open with MEMVAULT_DANGEROUS_SKIP_KEY_CHECK: %v", err)
	}
	h.Close()
	if h, err = Open(ctx, c); err != nil { // the mark was not changed by the skip
		t.Fatalf("reopen with the database's mapping: %v", err)
	}
	h.Close()
}

// TestKeyTablePinned: a database records the id of the key table that
// holds its subjects' keys, and a process pointed at another is refused
// (ErrSubjectsChanged): a new table knows nothing of carol's erasure and
// made her a key again — MEMVAULT_KEY_TABLE naming a new file or schema,
// or the SQLite database opened through a symlink, whose default key file
// is new beside the link (found by the session 21 review: "thread carol:2
// reads "carol takes insulin (after erasure)""). The same table opens.
func TestKeyTablePinned(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		pg    bool // the data in a PostgreSQL schema of its own
		other func(c config.Config, dir string) config.Config
	}{
		"MEMVAULT_KEY_TABLE names a new file": {false, func(c config.Config, dir string) config.Config {
			c.KeyTable = filepath.Join(dir, "agent-keys.db")
			return c
		}},
		"the database through a symlink": {false, func(c config.Config, dir string) config.Config {
			link := filepath.Join(dir, "current.db")
			if err := os.Symlink(c.DBPath, link); err != nil {
				t.Fatal(err)
			}
			c.DBPath = link
			return c
		}},
		"PostgreSQL: MEMVAULT_KEY_TABLE names a new schema": {true, func(c config.Config, _ string) config.Config {
			c.KeyTable += "_elsewhere"
			return c
		}},
		"PostgreSQL: MEMVAULT_KEY_DSN with its own key schema": {true, func(c config.Config, _ string) config.Config {
			c.KeyDSN, c.KeyTable = c.DSN, ""
			return c
		}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c := config.Default()
			c.DBPath = filepath.Join(dir, "agent.db")
			if tc.pg {
				c.DSN = pgtest.SchemaDSN(t)
				c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
			}
			c.Keys.Primary = testkeys.Key
			c.Embeddings = "none"
			c.Subjects.ThreadSeparator = ":"
			c.Subjects.NamespacePrefix = []string{"users"}
			erasedCarol(t, c)
			h, err := Open(ctx, tc.other(c, dir))
			if err == nil {
				h.Close()
			}
			if !errors.Is(err, ErrSubjectsChanged) {
				t.Fatalf("Open with another key table = %v, want ErrSubjectsChanged", err)
			}
			if h, err = Open(ctx, c); err != nil {
				t.Fatalf("reopen with the database's key table: %v", err)
			}
			h.Close()
		})
	}
}

// TestSubjectMarksOfAnOlderDatabase: a database marked only with
// subject_keys (before the mapping and key table were recorded) gets both
// marks at its next open with per-subject keys, and is pinned from then on.
func TestSubjectMarksOfAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	erasedCarol(t, c)
	db, err := sql.Open("sqlite", c.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name IN ('subject_mapping', 'subject_key_table')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatalf("Open of a database marked before the mapping was: %v", err)
	}
	h.Close()
	other := c
	other.Subjects.ThreadSeparator = "/"
	if h, err := Open(ctx, other); !errors.Is(err, ErrSubjectsChanged) {
		if err == nil {
			h.Close()
		}
		t.Fatalf("Open with another mapping after the marks were added = %v, want ErrSubjectsChanged", err)
	}
}
