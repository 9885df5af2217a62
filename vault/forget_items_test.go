package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestSubjectNamespacesFromEnv: MEMVAULT_SUBJECT_NAMESPACE takes a
// comma-separated list of dotted prefixes with "*" labels, and refuses a
// leading "*", empty labels and prefixes giving one namespace two subjects.
func TestSubjectNamespacesFromEnv(t *testing.T) {
	c, err := config.FromLookup(lookup(map[string]string{
		"LANGGRAPH_AES_KEY":          testkeys.Key,
		"MEMVAULT_SUBJECT_NAMESPACE": "users, adk.*.sessions,adk.*.memory",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.SubjectsOn() || !reflect.DeepEqual(c.Subjects.Prefixes(), [][]string{{"users"}, {"adk", "*", "sessions"}, {"adk", "*", "memory"}}) {
		t.Fatalf("prefixes %q", c.Subjects.Prefixes())
	}
	for _, v := range []string{"*.memory", "adk..memory", "users,", "users,users.*.x", "langgraph.*.x"} {
		_, err := config.FromLookup(lookup(map[string]string{"LANGGRAPH_AES_KEY": testkeys.Key, "MEMVAULT_SUBJECT_NAMESPACE": v}))
		if err == nil || !strings.Contains(err.Error(), "MEMVAULT_SUBJECT_NAMESPACE") {
			t.Errorf("MEMVAULT_SUBJECT_NAMESPACE=%s: %v, want an error naming the variable", v, err)
		}
	}
	c = config.Default()
	c.Keys.Primary = testkeys.Key
	c.Subjects.NamespacePrefixes = [][]string{{"*", "memory"}}
	if err := c.Validate(); err == nil {
		t.Error("Validate accepted a prefix starting with *")
	}
}

// TestForgetNamespacePrefixes: Forget deletes a subject's items under
// every prefix, a "*" matching every app — also a namespace whose items
// have all expired but were not swept — and nothing else: not another
// subject's items, and for the subject "*" only the namespace labelled
// "*", not every subject's.
func TestForgetNamespacePrefixes(t *testing.T) {
	sqliteCfg := config.Default()
	sqliteCfg.DBPath = filepath.Join(t.TempDir(), "agent.db")
	pgCfg := config.Default()
	pgCfg.DSN = pgtest.SchemaDSN(t)
	pgCfg.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
	for name, c := range map[string]config.Config{"sqlite": sqliteCfg, "postgres": pgCfg} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c.Keys.Primary = testkeys.Key
			c.Subjects = keys.Subjects{NamespacePrefix: []string{"users"}, NamespacePrefixes: [][]string{{"adk", "*", "sessions"}, {"adk", "*", "memory"}}}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.Pool != nil {
				defer h.Pool.Exec(ctx, `DROP SCHEMA `+c.KeyTable+` CASCADE`)
			}
			put := func(ns ...string) {
				if err := h.Store.Put(ctx, ns, "k", map[string]any{"v": strings.Join(ns, "/")}); err != nil {
					t.Fatal(err)
				}
			}
			for _, who := range []string{"carol", "dave"} {
				put("users", who, "prefs")
				put("adk", "desk", "sessions", who)
				put("adk", "shop", "memory", who, "s1")
			}
			put("adk", "old", "sessions", "carol")
			put("adk", "desk", "sessions", "*")
			// carol's only item in app "old" has expired, unswept.
			expire := `UPDATE store SET expires_at = 1 WHERE prefix = 'adk.old.sessions.carol'`
			if h.Pool != nil {
				_, err = h.Pool.Exec(ctx, `UPDATE store SET expires_at = now() - interval '1 hour' WHERE prefix = 'adk.old.sessions.carol'`)
			} else {
				_, err = openRaw(t, c.DBPath).ExecContext(ctx, expire)
			}
			if err != nil {
				t.Fatal(err)
			}

			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Items != 3 {
				t.Errorf("carol: %d items deleted, want 3", r.Items)
			}
			want := []string{"adk.desk.sessions.*", "adk.desk.sessions.dave", "adk.shop.memory.dave.s1", "users.dave.prefs"}
			if got := storedPrefixes(t, h, c); !slices.Equal(got, want) {
				t.Fatalf("after forgetting carol: %q, want %q", got, want)
			}
			if r, err = h.Forget(ctx, "*"); err != nil || r.Items != 1 {
				t.Fatalf("forget *: %d items, %v; want 1", r.Items, err)
			}
			if got := storedPrefixes(t, h, c); !slices.Equal(got, want[1:]) {
				t.Fatalf("after forgetting *: %q, want %q", got, want[1:])
			}
		})
	}
}

// storedPrefixes lists the namespaces of the store's rows, expired or
// not, sorted.
func storedPrefixes(t *testing.T, h *Handle, c config.Config) []string {
	t.Helper()
	const q = `SELECT prefix FROM store ORDER BY prefix`
	var out []string
	if h.Pool != nil {
		rows, err := h.Pool.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		rows, err := openRaw(t, c.DBPath).Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out) // byte order, whatever the database's collation
	return out
}
