package pgstore_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

// statementLog records the statements a pool sends, with their arguments
// (pgx's QueryTracer and BatchTracer).
type statementLog struct {
	mu    sync.Mutex
	on    bool
	stmts []loggedStatement
}

type loggedStatement struct {
	sql  string
	args []any
}

func (l *statementLog) add(sql string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		var kept []any
		for _, a := range args {
			if _, mode := a.(pgx.QueryExecMode); !mode {
				kept = append(kept, a)
			}
		}
		l.stmts = append(l.stmts, loggedStatement{sql, kept})
	}
}

// record turns recording on, runs f and returns what f sent.
func (l *statementLog) record(f func()) []loggedStatement {
	l.mu.Lock()
	l.on, l.stmts = true, nil
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.stmts
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add(d.SQL, d.Args)
	return ctx
}
func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (l *statementLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.add(d.SQL, d.Args)
}
func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

var (
	taskCount    = regexp.MustCompile(`Task Count: (\d+)`)
	insertSelect = regexp.MustCompile(`INSERT/SELECT method: ([a-z ]+)`)
)

// TestStatementShardsCitus EXPLAINs, on a Citus coordinator, the statements
// the store sends for each operation (recorded as sent, with their
// arguments) and checks how many shards each touches (Citus's "Task
// Count"): one for what names one namespace (Get, Put, Delete, PutIf,
// ListItems of the namespace itself), every shard for what does not (a search under
// a prefix, whose namespace's descendants live on other shards,
// ListNamespaces, DeletePrefix, the TTL sweep). It logs the counts per statement.
func TestStatementShardsCitus(t *testing.T) {
	ctx := t.Context()
	base, _ := pgtest.CitusSchema(t)
	log := &statementLog{}
	cfg := base.Config()
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// EXPLAIN through the simple protocol: the arguments are written into
	// the statement, as a custom plan sees them.
	ecfg := base.Config()
	ecfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	explainPool, err := pgxpool.NewWithConfig(ctx, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(explainPool.Close)

	clock := storetest.NewClock()
	s, err := pgstore.New(pool, pgstore.Options{
		Index: &store.IndexConfig{Embedder: storetest.NewAxisEmbedder("apple", "banana", "cherry")},
		TTL:   &store.TTLConfig{SweepInterval: -1},
		Now:   clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		ns := store.Namespace{"users", fmt.Sprintf("u%d", i), "memories"}
		if err := s.Put(ctx, ns, "k", map[string]any{"text": "apple banana"}); err != nil {
			t.Fatal(err)
		}
	}
	one := store.Namespace{"users", "u3", "memories"}
	const all = pgtest.CitusShardCount
	for _, tc := range []struct {
		name string
		want int // tasks of every statement (the most of a statement's steps)
		op   func() error
	}{
		{"Get", 1, func() error { _, err := s.Get(ctx, one, "k"); return err }},
		{"Put", 1, func() error { return s.Put(ctx, one, "k2", map[string]any{"text": "cherry"}) }},
		{"Delete", 1, func() error { return s.Delete(ctx, one, "k2") }},
		{"PutIf (absent)", 1, func() error {
			return s.PutIf(ctx, one, "k3", map[string]any{"text": "cherry"}, store.PutCondition{})
		}},
		{"ListItems of one namespace", 1, func() error {
			_, err := s.ListItems(ctx, one, store.ListItemsOptions{Limit: 10})
			return err
		}},
		{"Search under one namespace", all, func() error {
			_, err := s.Search(ctx, one, store.SearchOptions{Query: "apple", Limit: 5})
			return err
		}},
		{"Search across namespaces", all, func() error {
			_, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "apple", Limit: 5})
			return err
		}},
		{"Search with a filter, no query", all, func() error {
			_, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Filter: map[string]any{"text": "apple banana"}, Limit: 5})
			return err
		}},
		{"ListNamespaces", all, func() error {
			_, err := s.ListNamespaces(ctx, store.ListNamespacesOptions{Limit: 10})
			return err
		}},
		{"DeletePrefix", all, func() error { _, err := s.DeletePrefix(ctx, store.Namespace{"users", "u4"}); return err }},
		{"Sweep (TTL)", all, func() error { _, err := s.Sweep(ctx); return err }},
	} {
		stmts := log.record(func() {
			if err := tc.op(); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		})
		if len(stmts) == 0 {
			t.Fatalf("%s sent no statement", tc.name)
		}
		most := 0
		for _, st := range stmts {
			switch strings.ToLower(strings.Fields(st.sql)[0]) {
			case "begin", "commit", "rollback", "savepoint", "release":
				continue
			}
			if strings.HasPrefix(st.sql, "SELECT set_config") {
				continue // index settings, no table
			}
			var plan []string
			rows, err := explainPool.Query(ctx, "EXPLAIN (COSTS OFF) "+st.sql, textArgs(st.args)...)
			if err == nil {
				plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil {
				t.Fatalf("%s: EXPLAIN %s: %v", tc.name, oneLineSQL(st.sql), err)
			}
			text := strings.Join(plan, "\n")
			var tasks []int
			for _, m := range taskCount.FindAllStringSubmatch(text, -1) {
				n, _ := strconv.Atoi(m[1])
				tasks = append(tasks, n)
			}
			if len(tasks) == 0 {
				// An INSERT ... SELECT from parameters: the coordinator
				// evaluates the rows and sends each to its shard.
				method := "no task count"
				if m := insertSelect.FindStringSubmatch(text); m != nil {
					method = "INSERT/SELECT method: " + m[1] + " (rows routed to their shards)"
				}
				t.Logf("%-28s %s\n    %s", tc.name, method, oneLineSQL(st.sql))
				continue
			}
			t.Logf("%-28s tasks %v\n    %s", tc.name, tasks, oneLineSQL(st.sql))
			if n := slices.Max(tasks); n > most {
				most = n
			}
			if n := slices.Max(tasks); n > tc.want {
				t.Errorf("%s: a statement touches %d shards, want at most %d:\n%s\n%s", tc.name, n, tc.want, st.sql, text)
			}
		}
		if most != tc.want {
			t.Errorf("%s: its statements touch at most %d shards, want %d", tc.name, most, tc.want)
		}
	}
}

func oneLineSQL(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 160 {
		sql = sql[:160] + "…"
	}
	return sql
}

// textArgs turns vectors (pgvector-go's binary values, which the simple
// protocol cannot send) into their text.
func textArgs(args []any) []any {
	out := slices.Clone(args)
	for i, a := range args {
		switch v := a.(type) {
		case []pgvector.Vector:
			out[i] = texts(v)
		case []pgvector.HalfVector:
			out[i] = texts(v)
		case pgvector.Vector:
			out[i] = v.String()
		case pgvector.HalfVector:
			out[i] = v.String()
		}
	}
	return out
}

func texts[T fmt.Stringer](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
