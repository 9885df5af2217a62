package audit_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// Audit keys of a master key K1 and of the K2 that replaced it.
var (
	k1 = bytes.Repeat([]byte{5}, 32) // = key, the trail tests' key
	k2 = bytes.Repeat([]byte{7}, 32)
)

// backend is a trail table, the data database it belongs to, and what an
// attacker with write access to the trail (not to the data database) can
// do.
type backend struct {
	table audit.Table
	// dbID and meta are the data database's id and its record that the
	// trail's hash chain began (a real data database's memvault_meta on
	// SQLite and PostgreSQL).
	dbID string
	meta audit.Meta
	// cut deletes the records after keep.
	cut func(t *testing.T, keep int64)
	// wipe deletes every record.
	wipe func(t *testing.T)
	// put replaces every record with rs, stored as they are.
	put func(t *testing.T, rs []audit.Record)
}

// backends makes a fresh table of each kind.
func backends() map[string]func(t *testing.T) backend {
	return map[string]func(t *testing.T) backend{
		"memory": func(t *testing.T) backend {
			m := audit.NewMemoryTable()
			cut := func(_ *testing.T, keep int64) {
				m.Tamper(func(rs []audit.Record) []audit.Record { return rs[:keep] })
			}
			put := func(_ *testing.T, rs []audit.Record) {
				m.Tamper(func([]audit.Record) []audit.Record { return append([]audit.Record(nil), rs...) })
			}
			return backend{table: m, dbID: "db-1", meta: &audit.MemoryMeta{}, cut: cut, wipe: func(t *testing.T) { cut(t, 0) }, put: put}
		},
		"sqlite": func(t *testing.T) backend {
			dir := t.TempDir()
			path := filepath.Join(dir, "trail.db")
			tb, err := sqliteaudit.Open(t.Context(), path)
			must(t, err)
			t.Cleanup(func() { tb.Close() })
			data := filepath.Join(dir, "data.db")
			id, err := sqliteaudit.DatabaseID(t.Context(), data)
			must(t, err)
			raw, err := sql.Open("sqlite", path)
			must(t, err)
			t.Cleanup(func() { raw.Close() })
			cut := func(t *testing.T, keep int64) {
				_, err := raw.Exec(`DELETE FROM memvault_audit WHERE seq > ?`, keep)
				must(t, err)
			}
			put := func(t *testing.T, rs []audit.Record) {
				cut(t, 0)
				for _, r := range rs {
					_, err := raw.Exec(`INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
						r.Seq, r.Time.UTC().Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC)
					must(t, err)
				}
			}
			return backend{table: tb, dbID: id, meta: sqliteaudit.Meta(data), cut: cut, wipe: func(t *testing.T) { cut(t, 0) }, put: put}
		},
		"postgres": func(t *testing.T) backend {
			// The trail in a schema of the test's own, named: not the
			// search path's memvault_audit, which a shared database
			// (TEST_DATABASE_URL) may hold in public for other binaries.
			pool, schema := pgtest.Schema(t)
			tb, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
			must(t, err)
			must(t, tb.Setup(t.Context()))
			trail := pgx.Identifier{schema, "memvault_audit"}.Sanitize()
			_, data := pgtest.Schema(t)
			id, err := pgaudit.DatabaseID(t.Context(), pool, data)
			must(t, err)
			cut := func(t *testing.T, keep int64) {
				_, err := pool.Exec(context.Background(), `DELETE FROM `+trail+` WHERE seq > $1`, keep)
				must(t, err)
			}
			put := func(t *testing.T, rs []audit.Record) {
				cut(t, 0)
				for _, r := range rs {
					_, err := pool.Exec(context.Background(), `INSERT INTO `+trail+` (seq, at, principal, op, target, subject, key_id, link, mac) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
						r.Seq, r.Time, r.Principal, r.Op, r.Target, r.Subject, r.KeyID, r.Link, r.MAC)
					must(t, err)
				}
			}
			return backend{table: tb, dbID: id, meta: pgaudit.Meta(pool, data), cut: cut, wipe: func(t *testing.T) { cut(t, 0) }, put: put}
		},
	}
}

func newTrail(t testing.TB, tb audit.Table, dbID string, key []byte, previous ...[]byte) *audit.Trail {
	t.Helper()
	tr, err := audit.NewTrail(tb, audit.Options{Key: key, Previous: previous, DatabaseID: dbID})
	must(t, err)
	return tr
}

// TestTrailOfAnotherDatabase: two databases under the same master key, each
// with its trail; the trail of one put in the place of the other's (the
// SQLite file copied over; the PostgreSQL rows replaced, 17 records for 14)
// fails Verify, saying it may belong to another database. The data
// database's id is created once and stays.
func TestTrailOfAnotherDatabase(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		ids := map[string]string{}
		for _, db := range []string{"a", "b"} {
			id, err := sqliteaudit.DatabaseID(ctx, filepath.Join(dir, db+".db"))
			must(t, err)
			again, err := sqliteaudit.DatabaseID(ctx, filepath.Join(dir, db+".db"))
			must(t, err)
			if len(id) != 32 || again != id {
				t.Fatalf("database id %q, then %q", id, again)
			}
			ids[db] = id
			tb, err := sqliteaudit.Open(ctx, filepath.Join(dir, db+".db.audit"))
			must(t, err)
			fill(t, newTrail(t, tb, id, key), map[string]int{"a": 17, "b": 14}[db])
			must(t, tb.Close())
		}
		if ids["a"] == ids["b"] {
			t.Fatal("two databases share an id")
		}
		// b's trail replaced by a's, with the same master key.
		src, err := os.ReadFile(filepath.Join(dir, "a.db.audit"))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "b.db.audit"), src, 0o600))
		for db, wantOK := range map[string]bool{"a": true, "b": false} {
			tb, err := sqliteaudit.Open(ctx, filepath.Join(dir, db+".db.audit"))
			must(t, err)
			n, err := newTrail(t, tb, ids[db], key).Verify(ctx)
			tb.Close()
			if wantOK && (err != nil || n != 17) {
				t.Fatalf("%s's own trail: %d, %v", db, n, err)
			}
			if !wantOK && (!errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "another database")) {
				t.Fatalf("a's trail next to b verified: %d, %v", n, err)
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		pool, _ := pgtest.Schema(t)
		_, dataA := pgtest.Schema(t)
		_, dataB := pgtest.Schema(t)
		_, trailA := pgtest.Schema(t)
		_, trailB := pgtest.Schema(t)
		idA, err := pgaudit.DatabaseID(ctx, pool, dataA)
		must(t, err)
		idB, err := pgaudit.DatabaseID(ctx, pool, dataB)
		must(t, err)
		if again, err := pgaudit.DatabaseID(ctx, pool, dataA); err != nil || again != idA || idA == idB || len(idA) != 32 {
			t.Fatalf("database ids %q %q %q, %v", idA, again, idB, err)
		}
		open := func(schema string) *pgaudit.Table {
			tb, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
			must(t, err)
			must(t, tb.Setup(ctx))
			return tb
		}
		fill(t, newTrail(t, open(trailA), idA, key), 17)
		fill(t, newTrail(t, open(trailB), idB, key), 14)
		_, err = pool.Exec(ctx, fmt.Sprintf(`DELETE FROM %[1]s.memvault_audit; INSERT INTO %[1]s.memvault_audit SELECT * FROM %[2]s.memvault_audit`, trailB, trailA))
		must(t, err)
		if n, err := newTrail(t, open(trailA), idA, key).Verify(ctx); err != nil || n != 17 {
			t.Fatalf("a's own trail: %d, %v", n, err)
		}
		if n, err := newTrail(t, open(trailB), idB, key).Verify(ctx); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "another database") {
			t.Fatalf("a's trail in b's place verified: %d, %v", n, err)
		}
	})
}

// TestRotationByTheBook: records under K1; K2 becomes the primary key with
// K1 previous, and the next record first records the key change (MACed by
// both); K1 retired, the untouched trail verifies under K2 alone (the key
// change vouching for K1's records). K1 alone authenticates what was written
// before the change, not what came after.
func TestRotationByTheBook(t *testing.T) {
	ctx := context.Background()
	for name, newBackend := range backends() {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t)
			fill(t, newTrail(t, b.table, "db-1", k1), 5)
			fill(t, newTrail(t, b.table, "db-1", k2, k1), 3) // the key change, then 3
			var ops []string
			must(t, newTrail(t, b.table, "db-1", k2).Records(ctx, audit.Filter{}, func(r audit.Record) error {
				ops = append(ops, r.Op)
				return nil
			}))
			if len(ops) != 9 || ops[5] != audit.OpKeyChange {
				t.Fatalf("records %v", ops)
			}
			rep, err := newTrail(t, b.table, "db-1", k2).Check(ctx, nil)
			if err != nil || rep.Records != 9 || rep.Vouched != 5 {
				t.Fatalf("verify with the current key alone: %+v, %v", rep, err)
			}
			if n, err := newTrail(t, b.table, "db-1", k2, k1).Verify(ctx); err != nil || n != 9 {
				t.Fatalf("verify with both keys: %d, %v", n, err)
			}
			// A retired key vouches for nothing written after it retired.
			if n, err := newTrail(t, b.table, "db-1", k1).Verify(ctx); !errors.Is(err, audit.ErrUnverifiable) || !strings.Contains(err.Error(), "records 7–9") {
				t.Fatalf("verify with the old key alone: %d, %v", n, err)
			}
			// A later writer with K2 alone goes on in K2's epoch.
			fill(t, newTrail(t, b.table, "db-1", k2), 2)
			if n, err := newTrail(t, b.table, "db-1", k2).Verify(ctx); err != nil || n != 11 {
				t.Fatalf("verify after more records: %d, %v", n, err)
			}
			// A writer that has only K1 cannot extend the trail any more.
			err = newTrail(t, b.table, "db-1", k1).Log(ctx, audit.OpItemRead, "x", "", "")
			if !errors.Is(err, audit.ErrUnverifiable) || !strings.Contains(err.Error(), "not configured") {
				t.Fatalf("a K1 writer after the rotation: %v", err)
			}
		})
	}
}

// TestOldKeyCannotRechain: after a rotation by the book, whoever holds the
// retired K1 and can write the table rebuilds the whole trail under K1 —
// the records written after the rotation included. It does not verify with
// the current key alone, nor with K1 still configured as a previous key.
func TestOldKeyCannotRechain(t *testing.T) {
	ctx := context.Background()
	for name, newBackend := range backends() {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t)
			fill(t, newTrail(t, b.table, "db-1", k1), 5)
			fill(t, newTrail(t, b.table, "db-1", k2, k1), 4)
			var real []audit.Record
			must(t, newTrail(t, b.table, "db-1", k2).Records(ctx, audit.Filter{}, func(r audit.Record) error {
				real = append(real, r)
				return nil
			}))
			// The attacker re-chains every record, but the key change and
			// one read, under K1.
			b.wipe(t)
			forger := newTrail(t, b.table, "db-1", k1)
			for i, r := range real {
				if r.Op == audit.OpKeyChange || i == 2 {
					continue
				}
				must(t, forger.Log(audit.WithPrincipal(ctx, r.Principal), r.Op, r.Target, r.Subject, r.KeyID))
			}
			if n, err := newTrail(t, b.table, "db-1", k2).Verify(ctx); !errors.Is(err, audit.ErrTampered) {
				t.Fatalf("re-chained trail verified under the current key: %d, %v", n, err)
			}
			if n, err := newTrail(t, b.table, "db-1", k2, k1).Verify(ctx); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "ends under the previous audit key") {
				t.Fatalf("re-chained trail verified with the old key still configured: %d, %v", n, err)
			}
		})
	}
}

// TestAnchors: anchors taken along the way detect the trail cut back
// (which Verify alone cannot tell from a trail that ended there), and cut
// back then regrown to beyond the anchor (a rollback); an edited anchor, or
// one of another database, is refused.
func TestAnchors(t *testing.T) {
	ctx := context.Background()
	for name, newBackend := range backends() {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t)
			tr := newTrail(t, b.table, "db-1", key)
			fill(t, tr, 5)
			a1, err := tr.Anchor(audit.WithPrincipal(ctx, "cron"))
			must(t, err)
			fill(t, tr, 3)
			a2, err := tr.Anchor(ctx)
			must(t, err)
			fill(t, tr, 2)
			if a1.Seq != 6 || a2.Seq != 10 || a1.DatabaseID != "db-1" || a2.Time.IsZero() {
				t.Fatalf("anchors %+v %+v", a1, a2)
			}
			// As `memvault audit anchor` writes them, one JSON line each.
			var file bytes.Buffer
			for _, a := range []audit.Anchor{a1, a2} {
				line, err := json.Marshal(a)
				must(t, err)
				file.Write(append(line, '\n'))
			}
			anchors, err := audit.ReadAnchors(bytes.NewReader(file.Bytes()))
			must(t, err)
			if n, err := tr.VerifyAnchors(ctx, anchors); err != nil || n != 12 {
				t.Fatalf("untouched trail: %d, %v", n, err)
			}

			// Cut back to record 8: Verify alone sees nothing wrong.
			b.cut(t, 8)
			if n, err := tr.Verify(ctx); err != nil || n != 8 {
				t.Fatalf("cut trail without anchors: %d, %v", n, err)
			}
			if _, err := tr.VerifyAnchors(ctx, anchors); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "the trail ends at record 8, but the anchor") {
				t.Fatalf("cut trail against the anchors: %v", err)
			}
			// Rolled back: regrown past the anchor with other records.
			fill(t, tr, 4)
			if _, err := tr.VerifyAnchors(ctx, anchors); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "record 10 differs from the anchor") {
				t.Fatalf("rolled-back trail against the anchors: %v", err)
			}
			if n, err := tr.VerifyAnchors(ctx, anchors[:1]); err != nil || n != 12 {
				t.Fatalf("against the anchor before the rollback: %d, %v", n, err)
			}

			edited := a1
			edited.Seq = 3
			if _, err := tr.VerifyAnchors(ctx, []audit.Anchor{edited}); !errors.Is(err, audit.ErrInvalidAnchor) {
				t.Fatalf("edited anchor: %v", err)
			}
			if _, err := newTrail(t, b.table, "db-2", key).VerifyAnchors(ctx, anchors[:1]); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "of database \"db-1\"") {
				t.Fatalf("anchor of another database: %v", err)
			}
			if _, err := audit.ReadAnchors(strings.NewReader("{\"seq\": 1}\nnot json\n")); !errors.Is(err, audit.ErrInvalidAnchor) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("malformed anchor file: %v", err)
			}
			// Under a retired key an anchor cannot be authenticated, but a
			// trail that does not reach it is still caught.
			fill(t, newTrail(t, b.table, "db-1", k2, key), 1)
			b.cut(t, 7)
			if _, err := newTrail(t, b.table, "db-1", k2).VerifyAnchors(ctx, anchors); !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), "could not be authenticated") {
				t.Fatalf("retired key's anchors: %v", err)
			}
		})
	}
}

// TestPrincipalControlCharacters: a principal that would print as more
// than one line, column or colour of a review is refused; the records an
// id with the same characters produces are kept as they are (the CLI
// escapes them).
func TestPrincipalControlCharacters(t *testing.T) {
	ctx := context.Background()
	tb := audit.NewMemoryTable()
	tr := trail(t, tb)
	for _, p := range []string{"mallory\n999\t2025-01-01T00:00:00Z\tadmin\tsubject.erase\tcarol", "a\tb", "a\rb", "\x1b[2Kadmin", "admin\u202e", "a\x00b", "\xff"} {
		err := tr.Log(audit.WithPrincipal(ctx, p), audit.OpItemRead, "x", "", "")
		if !errors.Is(err, audit.ErrInvalidPrincipal) {
			t.Errorf("principal %q: %v", p, err)
		}
		if _, err := tr.Anchor(audit.WithPrincipal(ctx, p)); !errors.Is(err, audit.ErrInvalidPrincipal) {
			t.Errorf("anchor by %q: %v", p, err)
		}
	}
	for _, p := range []string{"", "dr. Müller", "svc:agent@prod", "小林"} {
		must(t, tr.Log(audit.WithPrincipal(ctx, p), audit.OpItemRead, "thread\nwith\tcontrols", "", ""))
	}
	if err := tr.Log(ctx, audit.OpKeyChange, "a -> b", "", ""); !errors.Is(err, audit.ErrReservedOp) {
		t.Fatalf("a caller logged a key change: %v", err)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 4 {
		t.Fatalf("verify: %d, %v", n, err)
	}
}

// TestTrailKeepsNoKeyInText: a trail printed with any verb names key ids,
// never key bytes.
func TestTrailKeepsNoKeyInText(t *testing.T) {
	tr := newTrail(t, audit.NewMemoryTable(), "db-1", k2, k1)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, tr); strings.Contains(s, "[7 7 7") || strings.Contains(s, "\x07") || !strings.Contains(s, tr.KeyID()) {
			t.Fatalf("%s: %s", verb, s)
		}
	}
}
