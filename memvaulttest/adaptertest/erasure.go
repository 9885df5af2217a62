package adaptertest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// Erasure describes one adapter's erasure test (see Forget).
type Erasure struct {
	// Prefixes are the adapter's subject namespace prefixes
	// (keys.Subjects.NamespacePrefixes), as its package exports them.
	Prefixes [][]string
	// Subject is the subject of a user id, as the adapter says.
	Subject func(user string) string
	// Write stores everything the adapter keeps of user (sessions,
	// events, the user's state, memories) on st; every value it gives the
	// adapter holds Marker(user).
	Write func(t *testing.T, st store.Store, user string)
	// Read reads user's data back through the adapter, in a comparable
	// form; a user with no data reads as empty.
	Read func(t *testing.T, st store.Store, user string) []string
}

// Marker is the text Erasure.Write puts in every value of user, which a
// raw scan of the store looks for.
func Marker(user string) string { return "s3cr3t-of-" + user }

// Forget is the erasure test of an adapter, on SQLite and PostgreSQL opened
// through vault.Open with per-subject keys on e.Prefixes and nothing else:
// users "carol.smith" (a "." to escape) and "dave" write their data, a
// copy of the data (not of the key table) is taken, and carol is
// forgotten. Then:
//   - through the adapter carol has nothing and dave has what he had;
//   - in the store, every item that held carol's marker or lived under
//     her subject is gone, every other item is there and decrypts, and no
//     remaining value holds her marker;
//   - in the restored copy, each of carol's items fails to decrypt with
//     the master key alone and with the key table after the erasure
//     (every key the operator still holds), while dave reads as before.
func Forget(t *testing.T, e Erasure) {
	const carol, dave = "carol.smith", "dave"
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := t.Context()
			c := config.Default()
			c.Keys.Primary = testkeys.Key
			c.Subjects = keys.Subjects{NamespacePrefixes: e.Prefixes}
			if backend == "sqlite" {
				c.DBPath = filepath.Join(t.TempDir(), "agent.db")
				c.KeyTable = c.DBPath + ".keys"
			} else {
				c.DSN = pgtest.SchemaDSN(t)
				c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
			}
			h := open(t, c)
			if h.Pool != nil {
				t.Cleanup(func() { _, _ = h.Pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+c.KeyTable+` CASCADE`) })
			}
			e.Write(t, h.Store, carol)
			e.Write(t, h.Store, dave)
			before := map[string][]string{carol: e.Read(t, h.Store, carol), dave: e.Read(t, h.Store, dave)}
			if len(before[carol]) == 0 || len(before[dave]) == 0 {
				t.Fatalf("nothing read back before the erasure: %q", before)
			}
			// carol's items: those holding her marker, and those under her
			// subject.
			subject := e.Subject(carol)
			hers, others := map[rowID]bool{}, map[rowID]bool{}
			for _, r := range rows(t, h, c) {
				it, err := h.Store.Get(ctx, store.ParseNamespace(r.ns), r.key)
				if err != nil || it == nil {
					t.Fatalf("%s before the erasure: %v, %v", r, it, err)
				}
				if holds(it.Value, Marker(carol)) || h.Keys.NamespaceSubject(r.ns) == subject {
					hers[r] = true
				} else {
					others[r] = true
				}
			}
			backup := takeBackup(t, h, c)

			rec, err := h.Forget(ctx, subject)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Items != len(hers) || len(rec.KeyIDs) != 1 {
				t.Errorf("receipt: %d items, keys %v; want %d items, one key", rec.Items, rec.KeyIDs, len(hers))
			}
			if got := e.Read(t, h.Store, carol); len(got) != 0 {
				t.Errorf("carol after the erasure: %q", got)
			}
			if got := e.Read(t, h.Store, dave); !reflect.DeepEqual(got, before[dave]) {
				t.Errorf("dave after carol's erasure: %q, want %q", got, before[dave])
			}
			left := map[rowID]bool{}
			for _, r := range rows(t, h, c) {
				left[r] = true
				it, err := h.Store.Get(ctx, store.ParseNamespace(r.ns), r.key)
				switch {
				case hers[r]:
					t.Errorf("carol's %s survived the erasure", r)
				case err != nil || it == nil:
					t.Errorf("%s after the erasure: %v, %v", r, it, err)
				case holds(it.Value, Marker(carol)):
					t.Errorf("%s holds carol's marker after the erasure", r)
				}
			}
			for r := range others {
				if !left[r] {
					t.Errorf("%s, not carol's, was deleted", r)
				}
			}

			// The copy from before comes back; the operator tries the
			// master key alone, then the key table as it is now.
			restored := restoreBackup(t, h, c, backup)
			master := restored
			master.Subjects = keys.Subjects{}
			// With the master key alone the copy does not open: its
			// values are under keys that are not loaded, or (when the
			// row the key probe reads is one of the master key's, which
			// depends on the heap's order) it is marked as keeping
			// subjects' values under their own keys. The attacker opens
			// it anyway.
			if rh, err := vault.Open(ctx, master); !errors.Is(err, vault.ErrKeyNotLoaded) && !errors.Is(err, vault.ErrSubjectsRequired) {
				if rh != nil {
					_ = rh.Close()
				}
				t.Fatalf("the restored copy with the master key alone: %v, want vault.ErrKeyNotLoaded or vault.ErrSubjectsRequired", err)
			}
			master.DangerousSkipKeyCheck = true
			for name, rc := range map[string]config.Config{"master key": master, "key table": restored} {
				rh := open(t, rc)
				for r := range hers {
					if it, err := rh.Store.Get(ctx, store.ParseNamespace(r.ns), r.key); !errors.Is(err, serde.ErrDecrypt) {
						t.Errorf("restored %s with the %s: read (%t), %v; want serde.ErrDecrypt", r, name, it != nil, err)
					}
				}
				if name == "key table" {
					if got := e.Read(t, rh.Store, dave); !reflect.DeepEqual(got, before[dave]) {
						t.Errorf("dave in the restored copy: %q, want %q", got, before[dave])
					}
				}
			}
		})
	}
}

// rowID is one stored item's coordinates.
type rowID struct {
	ns  string // dotted, as stored
	key string
}

func (r rowID) String() string { return fmt.Sprintf("item %s/%s", r.ns, r.key) }

// open opens c, closed when the test ends.
func open(t *testing.T, c config.Config) *vault.Handle {
	t.Helper()
	h, err := vault.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// holds reports whether text is in v: a string, bytes (such as JSON), or
// a map or slice holding one.
func holds(v any, text string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, text)
	case []byte:
		return strings.Contains(string(x), text)
	case map[string]any:
		for k, e := range x {
			if strings.Contains(k, text) || holds(e, text) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holds(e, text) {
				return true
			}
		}
	default:
		return strings.Contains(fmt.Sprint(x), text)
	}
	return false
}

// rows lists the store's items (h's PostgreSQL schema, or c's SQLite
// file), without decrypting them.
func rows(t *testing.T, h *vault.Handle, c config.Config) []rowID {
	t.Helper()
	var (
		rs interface {
			Next() bool
			Scan(...any) error
			Err() error
		}
		done func()
	)
	const q = `SELECT prefix, key FROM store`
	if h.Pool != nil {
		r, err := h.Pool.Query(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		rs, done = r, r.Close
	} else {
		db, err := sql.Open("sqlite", c.DBPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r, err := db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		rs, done = r, func() { _ = r.Close() }
	}
	defer done()
	var out []rowID
	for rs.Next() {
		var p, k string
		if err := rs.Scan(&p, &k); err != nil {
			t.Fatal(err)
		}
		out = append(out, rowID{p, k})
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// takeBackup copies the data, not the key table: the SQLite file into a
// file beside it, or the PostgreSQL store tables (items and vectors)
// into tables aside.
func takeBackup(t *testing.T, h *vault.Handle, c config.Config) string {
	t.Helper()
	if h.Pool == nil {
		bak := c.DBPath + ".bak"
		db, err := sql.Open("sqlite", c.DBPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), `VACUUM INTO '`+bak+`'`); err != nil {
			t.Fatal(err)
		}
		return bak
	}
	for _, tb := range []string{"store", "store_vectors"} {
		if _, err := h.Pool.Exec(t.Context(), `CREATE TABLE bak_`+tb+` AS SELECT * FROM `+tb); err != nil {
			t.Fatal(err)
		}
	}
	return "bak_"
}

// restoreBackup returns the configuration of the data restored from
// backup, with the live key table: the SQLite copy itself, or the
// PostgreSQL store tables with the copy's rows put back.
func restoreBackup(t *testing.T, h *vault.Handle, c config.Config, backup string) config.Config {
	t.Helper()
	if h.Pool == nil {
		c.DBPath = backup // c.KeyTable stays the live one
		return c
	}
	if _, err := h.Pool.Exec(t.Context(), `DELETE FROM store_vectors; DELETE FROM store;
INSERT INTO store SELECT * FROM `+backup+`store; INSERT INTO store_vectors SELECT * FROM `+backup+`store_vectors`); err != nil {
		t.Fatal(err)
	}
	return c
}
