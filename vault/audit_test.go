package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
)

// newKey is the master key that replaces testkeys.Key in a rotation.
const newKey = "fedcba9876543210fedcba9876543210"

// auditedConfigs returns, per backend, a function making the configuration
// of a fresh audited database under the master key testkeys.Key, and a
// function that runs SQL on that database's trail as whoever can write it.
func auditedConfigs(t *testing.T) map[string]func(t *testing.T) (config.Config, func(t *testing.T, sql string)) {
	return map[string]func(t *testing.T) (config.Config, func(t *testing.T, sql string)){
		"sqlite": func(t *testing.T) (config.Config, func(t *testing.T, sql string)) {
			c := config.Default()
			c.DBPath = filepath.Join(t.TempDir(), "agent.db")
			c.Keys.Primary = testkeys.Key
			c.Audit = true
			c.Embeddings = "none" // the attacker below opens the database with the old key
			return c, func(t *testing.T, sql string) {
				if _, err := openRaw(t, c.DBPath+".audit").Exec(sql); err != nil {
					t.Fatal(err)
				}
			}
		},
		"postgres": func(t *testing.T) (config.Config, func(t *testing.T, sql string)) {
			c := config.Default()
			c.DSN = pgtest.SchemaDSN(t)
			c.Keys.Primary = testkeys.Key
			c.Audit = true
			c.Embeddings = "none" // the attacker below opens the database with the old key
			c.AuditTable = fmt.Sprintf("audit_%d", time.Now().UnixNano())
			return c, func(t *testing.T, sql string) {
				pool, err := pgxpool.New(context.Background(), c.DSN)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				if _, err := pool.Exec(context.Background(), strings.ReplaceAll(sql, "memvault_audit", c.AuditTable+".memvault_audit")); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
}

// dataSQL runs q on c's data database (not its audit trail).
func dataSQL(t *testing.T, c config.Config, q string) {
	t.Helper()
	if c.DSN == "" {
		if _, err := openRaw(t, c.DBPath).Exec(q); err != nil {
			t.Fatal(err)
		}
		return
	}
	pool, err := pgxpool.New(context.Background(), c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// use opens c, puts a memory and reads it back (three records), and closes.
func use(t *testing.T, c config.Config) {
	t.Helper()
	ctx := audit.WithPrincipal(context.Background(), "dr.smith")
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "diet", map[string]any{"v": "no peanuts"}); err != nil {
		t.Fatal(err)
	}
	if it, err := h.Store.Get(ctx, store.Namespace{"users", "carol"}, "diet"); err != nil || it == nil {
		t.Fatalf("get: %v, %v", it, err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"x": "y"}, ChannelVersions: map[string]string{"x": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
}

// verifyWith opens c and verifies its trail.
func verifyWith(t *testing.T, c config.Config) (int64, error) {
	t.Helper()
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	return h.Audit.Verify(context.Background())
}

// TestAuditTrailOfAnotherDatabase: two databases under the same master key;
// the trail of one put in the place of the other's fails verification
// there, while each verifies in its own place.
func TestAuditTrailOfAnotherDatabase(t *testing.T) {
	for name, newConfig := range auditedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			a, _ := newConfig(t)
			b, _ := newConfig(t)
			use(t, a)
			use(t, a)
			use(t, b)
			if name == "sqlite" {
				src, err := os.ReadFile(a.DBPath + ".audit")
				if err != nil {
					t.Fatal(err)
				}
				for _, suffix := range []string{"-wal", "-shm"} {
					_ = os.Remove(b.DBPath + ".audit" + suffix)
				}
				if err := os.WriteFile(b.DBPath+".audit", src, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				pool, err := pgxpool.New(context.Background(), a.DSN)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				if _, err := pool.Exec(context.Background(), fmt.Sprintf(`DELETE FROM %[1]s.memvault_audit; INSERT INTO %[1]s.memvault_audit SELECT * FROM %[2]s.memvault_audit`, b.AuditTable, a.AuditTable)); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := verifyWith(t, a); err != nil || n != 6 {
				t.Fatalf("a's trail: %d, %v", n, err)
			}
			if n, err := verifyWith(t, b); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "another database") {
				t.Fatalf("a's trail in b's place: %d, %v", n, err)
			}
		})
	}
}

// TestAuditRotationByTheBook: the documented rotation — the new key
// primary, the old one previous, keys reencrypt, the old key retired —
// leaves a trail that verifies with the current key alone. Whoever holds
// the retired key and rebuilds the trail under it (the records written
// after the rotation included) does not get it verified, neither with the
// current key alone nor with the old key still configured.
func TestAuditRotationByTheBook(t *testing.T) {
	ctx := context.Background()
	for name, newConfig := range auditedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			c1, sql := newConfig(t)
			use(t, c1)
			c2 := c1
			c2.Keys.Primary, c2.Keys.Previous = newKey, []string{testkeys.Key}
			h, err := Open(ctx, c2)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil {
				t.Fatal(err)
			}
			h.Close()
			c3 := c1
			c3.Keys.Primary, c3.Keys.Previous = newKey, nil
			use(t, c3)
			if n, err := verifyWith(t, c3); err != nil || n != 3+3+3 { // 3 records; the key change and 2 re-encryptions; 3
				t.Fatalf("after the rotation, with the current key alone: %d, %v", n, err)
			}

			// The attacker, with K1, empties the trail and rebuilds it under
			// K1: memvault refuses to write on a trail that lost its chain
			// (the data database records that the chain started), and the
			// emptied trail does not verify.
			sql(t, `DELETE FROM memvault_audit`)
			// The retired key no longer opens the database (its values
			// are under the new key), so the attacker deletes them too.
			if h, err := Open(ctx, c1); !errors.Is(err, ErrKeyNotLoaded) {
				if h != nil {
					h.Close()
				}
				t.Fatalf("the retired key opened the database: %v", err)
			}
			for _, table := range []string{"store", "checkpoint_blobs", "checkpoint_writes"} {
				dataSQL(t, c1, `DELETE FROM `+table)
			}
			h, err = Open(ctx, c1)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Audit.Log(audit.WithPrincipal(ctx, "dr.smith"), audit.OpItemRead, "users.carol/k0", "", ""); err == nil {
				t.Fatal("a writer rebuilt an emptied trail under the retired key")
			}
			h.Close()
			if n, err := verifyWith(t, c3); !errors.Is(err, audit.ErrTampered) {
				t.Fatalf("re-chained under the retired key, verified with the current key: %d, %v", n, err)
			}
			if n, err := verifyWith(t, c2); !errors.Is(err, audit.ErrTampered) {
				t.Fatalf("re-chained under the old key, verified with it configured: %d, %v", n, err)
			}
		})
	}
}

// TestAuditRequiredOnceBegun is issue 30's third finding: without
// MEMVAULT_AUDIT a process wrote unrecorded on an audited database, and
// `audit verify` still said intact. Now a database whose trail has begun
// refuses every configuration that does not record, before any operation;
// a database without a trail opens either way.
func TestAuditRequiredOnceBegun(t *testing.T) {
	ctx := context.Background()
	for name, newConfig := range auditedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			audited, _ := newConfig(t)
			plain := audited
			plain.Audit = false
			// Before the trail begins, both open.
			h, err := Open(ctx, plain)
			if err != nil {
				t.Fatalf("no trail yet, audit off: %v", err)
			}
			h.Close()
			use(t, audited)
			if h, err := Open(ctx, plain); !errors.Is(err, ErrAuditRequired) || !strings.Contains(err.Error(), "MEMVAULT_AUDIT=true") {
				if h != nil {
					h.Close()
				}
				t.Fatalf("audit off on an audited database: %v, want ErrAuditRequired", err)
			}
			use(t, audited)
			if n, err := verifyWith(t, audited); err != nil || n != 6 {
				t.Fatalf("the trail after a refused open: %d, %v", n, err)
			}
		})
	}
}

// TestAuditCheckAddsNoTable: the check that an audited database records
// only reads — a SQLite database opened without audit gains no
// memvault_meta table (it did, once the check ran on every open).
func TestAuditCheckAddsNoTable(t *testing.T) {
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Embeddings = "none"
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	var n int
	if err := openRaw(t, c.DBPath).QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'memvault_meta'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("memvault_meta tables after an open without audit: %d, %v", n, err)
	}
}
