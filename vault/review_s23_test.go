package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// s23Config is a SQLite database with per-subject keys by thread id
// ("carol:1" is carol's) and by namespace ("users", subject).
func s23Config(dir string) config.Config {
	c := config.Default()
	c.DBPath = filepath.Join(dir, "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	return c
}

// TestReviewS23ForgetKilledBeforeMarkThenKeyTableRestored (session 23
// review): Forget counts the erasure in the key table (StartErasure's
// transaction, which destroys carol's keys) and only afterwards tells the
// data database (AdvanceMark). A Forget killed between the two — the
// window ForgetWith's comment names ("a run that dies here leaves it to
// the next process") — leaves the data database's mark at the old count
// and carol's rows in place. If the key table is then restored from a
// backup taken before (the operator's reaction to a crash mid-erasure, or
// a routine restore), the backup counts as many erasures as the database
// has seen, Open accepts it, and carol's destroyed key decrypts carol:1
// again. The data database knew an erasure of carol began: its audit
// trail logged subject.erase before StartErasure.
//
// Simulated kill: ForgetWith's steps up to the key transaction are called
// directly (beginErasure: the intent in the data database, then the key
// hierarchy's StartErasure), then the handle is closed: the state a kill
// -9 right after them leaves.
func TestReviewS23ForgetKilledBeforeMarkThenKeyTableRestored(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			c := s23Config(dir)
			var keySchema string
			if pg {
				c.DSN = pgtest.SchemaDSN(t)
				keySchema = fmt.Sprintf("keys_%d", time.Now().UnixNano())
				c.KeyTable = keySchema
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			backup, restore := keyTableBackup(t, c, dir, keySchema)
			backup()

			h, err = Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.log(ctx, audit.OpSubjectErase, "carol", "carol"); err != nil { // ForgetWith's first step
				t.Fatal(err)
			}
			if _, _, err := h.beginErasure(ctx, "carol", nil); err != nil { // its second (intent, then keys); killed right after
				t.Fatal(err)
			}
			h.Close()

			restore()
			h, err = Open(ctx, c)
			if err != nil {
				if errors.Is(err, ErrSubjectsChanged) {
					return // refused: the promise holds
				}
				t.Fatal(err)
			}
			defer h.Close()
			tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"})
			if err == nil && tup != nil {
				t.Fatalf("after a Forget(carol) killed once carol's keys were destroyed, the key table restored from a backup taken before "+
					"was accepted by Open and carol:1 reads back: %q", tup.Checkpoint.ChannelValues["notes"])
			}
			got, perr := putCarolS22(ctx, h, "carol:2", "carol takes insulin (after erasure)")
			if perr == nil {
				t.Fatalf("after a killed Forget(carol) and a key table restore, Open accepted the table and carol:2 reads back: %q", got)
			}
		})
	}
}

// TestReviewS23UnpinnedDatabaseTakesAnotherAppsKeyTable (session 23
// review): refuseEmptyKeyTable (the session 22 fix) refuses, for a
// database marked subject_keys without its key table pin, a key table
// that holds no key and erased no one, and checkKeyErasures one that
// counts fewer erasures than the database saw. A key table that holds a
// key and erased someone as often — the key file of another database, a
// mistyped MEMVAULT_KEY_TABLE naming a sibling app's table — passes both,
// is pinned, makes erased carol a key again, and carol:2 reads back after
// Forget(carol): the session 22 review's case (the two pin rows deleted),
// with a used table instead of an empty file.
func TestReviewS23UnpinnedDatabaseTakesAnotherAppsKeyTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := s23Config(dir)
	erasedCarol(t, c)
	db, err := sql.Open("sqlite", c.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name IN ('subject_mapping', 'subject_key_table')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Another application's database, whose key table holds erin's key
	// and erased frank: it counts as many erasures as agent.db has seen.
	other := s23Config(filepath.Join(dir))
	other.DBPath = filepath.Join(dir, "other.db")
	oh, err := Open(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"erin:1", "frank:1"} {
		if _, err := putCarolS22(ctx, oh, th, "notes"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := oh.Forget(ctx, "frank"); err != nil {
		t.Fatal(err)
	}
	oh.Close()

	typo := c
	typo.KeyTable = other.DBPath + ".keys"
	h, err := Open(ctx, typo)
	if err != nil {
		if errors.Is(err, ErrSubjectsChanged) {
			return // refused: the promise holds
		}
		t.Fatal(err)
	}
	defer h.Close()
	got, err := putCarolS22(ctx, h, "carol:2", "carol takes insulin (after erasure)")
	if err == nil {
		t.Fatalf("a database marked subject_keys without its key table pin opened with another database's key table (a key, an erasure), "+
			"wrote erased carol's carol:2 and reads it back: %q", got)
	}
}

// TestReviewS23ErasureBeforeUpgradeUncounted (session 23 review): key
// tables count erasures since session 22 only. An erasure run by an
// earlier memvault left a key table whose memvault_erasures records it but
// whose count is 0 (no 'erasures' row), and a data database without the
// subject_key_erasures mark: simulated here by deleting both after a
// Forget. A backup of the key table from before that erasure, restored
// afterwards, counts 0 against the database's 0 and is accepted: carol's
// key is back and carol:2 reads back — TestKeyTableBackupRefused's
// promise does not cover an upgraded installation until its next erasure.
func TestReviewS23ErasureBeforeUpgradeUncounted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := s23Config(dir)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	backup, restore := keyTableBackup(t, c, dir, "")
	backup()
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	// What an earlier memvault left: no count on either side.
	for file, q := range map[string]string{
		c.DBPath:           `DELETE FROM memvault_meta WHERE name = 'subject_key_erasures'`,
		c.DBPath + ".keys": `DELETE FROM memvault_keys_meta WHERE name = 'erasures'`,
	} {
		db, err := sql.Open("sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	if h, err = Open(ctx, c); err != nil { // the upgraded process, once
		t.Fatal(err)
	}
	h.Close()

	restore()
	h, err = Open(ctx, c)
	if err != nil {
		if errors.Is(err, ErrSubjectsChanged) {
			return // refused: the promise holds
		}
		t.Fatal(err)
	}
	defer h.Close()
	got, err := putCarolS22(ctx, h, "carol:2", "carol takes insulin (after erasure)")
	if err == nil {
		t.Fatalf("a key table backup from before an erasure run by an earlier memvault was accepted after the upgrade; carol:2 reads back: %q", got)
	}
}
