package vault

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// firstOpenArg is what TestFirstOpenChild, the other processes of
// TestConcurrentFirstOpen, are given: the database and the moment to open
// it (unix nanoseconds).
type firstOpenArg struct {
	DSN   string
	Start int64
}

// Goroutines of TestConcurrentFirstOpen in this process (each its own
// pool), and processes and goroutines per process besides.
const (
	firstOpeners       = 48
	firstOpenChildren  = 3
	firstOpenersPerKid = 4
)

// firstOpenConfig is the configuration every opener uses: the checkpointer
// and an indexed store in schema "agent", per-subject keys in
// memvault_keys, the audit trail in memvault_audit, on dsn.
func firstOpenConfig(dsn string) config.Config {
	c := config.Default() // Embeddings hash:256: an index, so the embedder table
	c.DSN = dsn
	c.Schema = "agent"
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	return c
}

// openAt waits until start, then opens c and closes it again.
func openAt(start time.Time, c config.Config) error {
	time.Sleep(time.Until(start))
	h, err := Open(context.Background(), c)
	if err != nil {
		return err
	}
	return h.Close()
}

// TestFirstOpenChild opens the database of its parent's
// TestConcurrentFirstOpen from firstOpenersPerKid goroutines at the given
// moment, and prints one line per failed open.
func TestFirstOpenChild(t *testing.T) {
	var arg firstOpenArg
	if !childproc.Arg(t, &arg) {
		t.Skip("a child of TestConcurrentFirstOpen")
	}
	dsn := arg.DSN
	var wg sync.WaitGroup
	for range firstOpenersPerKid {
		wg.Go(func() {
			if err := openAt(time.Unix(0, arg.Start), firstOpenConfig(dsn)); err != nil {
				childproc.Say("open failed: %v", err)
			}
		})
	}
	wg.Wait()
}

// freshDatabase creates an empty database (no pgvector, no schemas but
// public) on the test cluster, dropped when t ends, with an event trigger
// failing every DDL statement run without memvault's setup lock
// (pgmigrate.LockKey), and returns its connection string with at most two
// connections per pool, so that every opener gets its own pool within the
// server's connection limit.
func freshDatabase(t *testing.T) (dsn, plain string) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	name := fmt.Sprintf("first_open_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Skipf("cannot create a database on the test server: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Errorf("drop database: %v", err)
		}
	})
	plain = withDatabase(t, pgtest.DSN(t), name, "")
	db, err := pgx.Connect(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	// Every DDL statement in this database must come from a session holding
	// memvault's setup lock: a statement outside it fails, even when no
	// other opener happens to race it.
	if _, err := db.Exec(ctx, fmt.Sprintf(`CREATE FUNCTION public.memvault_test_under_lock() RETURNS event_trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
		AND objsubid = 1 AND ((classid::int8 << 32) | objid::int8) = %d) THEN
		RAISE EXCEPTION 'DDL outside the setup lock: %%', current_query();
	END IF;
END $f$`, pgmigrate.LockKey)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `CREATE EVENT TRIGGER memvault_test_under_lock ON ddl_command_start EXECUTE FUNCTION public.memvault_test_under_lock()`); err != nil {
		t.Skipf("cannot create an event trigger on the test server: %v", err)
	}
	return withDatabase(t, pgtest.DSN(t), name, "2"), plain
}

// withDatabase is dsn, a URL, on database name, with pool_max_conns set
// unless empty (pgx.Connect refuses it).
func withDatabase(t *testing.T, dsn, name, poolMaxConns string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the test DSN is not a URL: %v", err)
	}
	u.Path = "/" + name
	if poolMaxConns != "" {
		q := u.Query()
		q.Set("pool_max_conns", poolMaxConns)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// dropTrigger removes freshDatabase's event trigger, for the DDL of normal
// use (a PutMany's temporary tables).
func dropTrigger(t *testing.T, dsn string) {
	t.Helper()
	db, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if _, err := db.Exec(context.Background(), `DROP EVENT TRIGGER memvault_test_under_lock`); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentFirstOpen opens a fresh database from many pools and
// processes at the same moment: every open succeeds (setup statements all
// run under the one migration lock: the schema, pgvector, the checkpointer's,
// store's, embedder's, key table's, audit trail's and memvault_meta's
// tables: an event trigger fails any DDL statement run without it, so that
// one outside it fails the test even when no other opener races it), and
// the database then works. Before, a few openers failed with SQLSTATE 23505
// from the embedder table's CREATE TABLE IF NOT EXISTS, run outside the
// lock (1 of 60 per round under -race on 2 busy cores).
func TestConcurrentFirstOpen(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("in a child")
	}
	for round := range 2 {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			dsn, plain := freshDatabase(t)
			start := time.Now().Add(2 * time.Second) // the children are up by then
			var kids []*childproc.Child
			for range firstOpenChildren {
				kids = append(kids, childproc.Start(t, "TestFirstOpenChild", firstOpenArg{DSN: dsn, Start: start.UnixNano()}))
			}
			errs := make([]error, firstOpeners)
			var wg sync.WaitGroup
			for i := range firstOpeners {
				wg.Go(func() { errs[i] = openAt(start, firstOpenConfig(dsn)) })
			}
			wg.Wait()
			failed := 0
			for i, err := range errs {
				if err != nil {
					failed++
					t.Errorf("opener %d: %v", i, err)
				}
			}
			for i, kid := range kids {
				err := kid.Wait()
				var out []string
				for line := range kid.Lines {
					if strings.HasPrefix(line, "open failed: ") {
						failed++
						t.Errorf("process %d: %s", i, line)
					}
					out = append(out, line)
				}
				if err != nil {
					t.Errorf("process %d: %v\n%s", i, err, strings.Join(out, "\n"))
				}
			}
			if failed > 0 {
				t.Fatalf("%d of %d opens failed", failed, firstOpeners+firstOpenChildren*firstOpenersPerKid)
			}
			// The database works: a subject's memory is stored and found.
			dropTrigger(t, plain)
			ctx := context.Background()
			h, err := Open(ctx, firstOpenConfig(dsn))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			ns := store.Namespace{"users", "carol"}
			if err := h.Store.Put(ctx, ns, "diet", map[string]any{"text": "no peanuts"}); err != nil {
				t.Fatal(err)
			}
			got, err := h.Store.Search(ctx, ns, store.SearchOptions{Query: "peanuts", Limit: 1})
			if err != nil || len(got) != 1 || got[0].Key != "diet" {
				t.Fatalf("search after the concurrent opens: %v, %v", got, err)
			}
		})
	}
}
