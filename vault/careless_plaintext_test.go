package vault

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestCarelessWhatIsEncrypted walks README's "What is encrypted, and what
// is not" as a user would: the key exported, vault.OpenEnv, then the
// saver's and the store's ordinary calls with a known secret in every
// value the README says is encrypted — a list channel, a primitive string
// channel (which Python LangGraph keeps inline), a pending write, LangGraph's
// special write channels (__interrupt__, __error__) and a memory — and a
// marker in each place the README lists as plaintext (thread id,
// namespace, key, metadata). The raw database is then read (the SQLite
// files' bytes; every PostgreSQL table of the schema as text) and must
// hold every marker (so the scan can see) and no secret.
func TestCarelessWhatIsEncrypted(t *testing.T) {
	secrets := []string{"SECRETLISTalpha", "SECRETSTRbravo", "SECRETWRITEcharlie", "SECRETINTdelta", "SECRETERRecho", "SECRETMEMfoxtrot", "SECRETNESTgolf"}
	visible := []string{"visiblethread77", "visiblens88", "visiblekey99", "visiblemeta66"}

	write := func(t *testing.T) {
		ctx := context.Background()
		h, err := OpenEnv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if len(h.KeyIDs()) == 0 {
			t.Fatal("OpenEnv with LANGGRAPH_AES_KEY exported does not encrypt")
		}
		cfg := checkpointer.Config{ThreadID: "visiblethread77"}
		v := h.Saver.NextVersion("")
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
			ChannelValues: map[string]any{
				"messages": []any{"SECRETLISTalpha"},
				"answer":   "SECRETSTRbravo",
				"state":    map[string]any{"deep": []any{map[string]any{"x": "SECRETNESTgolf"}}},
			},
			ChannelVersions: map[string]string{"messages": v, "answer": v, "state": v},
		}
		next, err := h.Saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": 0, "note": "visiblemeta66"}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Saver.PutWrites(ctx, next, []checkpointer.Write{{Channel: "answer", Value: "SECRETWRITEcharlie"}}, "task-1", ""); err != nil {
			t.Fatal(err)
		}
		if err := h.Saver.PutWrites(ctx, next, []checkpointer.Write{{Channel: "__interrupt__", Value: []any{map[string]any{"value": "SECRETINTdelta"}}}}, "task-2", ""); err != nil {
			t.Fatal(err)
		}
		if err := h.Saver.PutWrites(ctx, next, []checkpointer.Write{{Channel: "__error__", Value: "SECRETERRecho"}}, "task-3", ""); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(ctx, store.Namespace{"users", "visiblens88"}, "visiblekey99", map[string]any{"text": "SECRETMEMfoxtrot lives in Lisbon"}); err != nil {
			t.Fatal(err)
		}
		// Read back through the same path: what was written is what the
		// user gets (so nothing was dropped to look encrypted).
		tup, err := h.Saver.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tup.Checkpoint.ChannelValues["answer"] != "SECRETSTRbravo" || len(tup.PendingWrites) != 3 {
			t.Fatalf("read back %v, %d pending writes", tup.Checkpoint.ChannelValues, len(tup.PendingWrites))
		}
	}
	check := func(t *testing.T, raw string) {
		for _, s := range secrets {
			if strings.Contains(raw, s) {
				i := strings.Index(raw, s)
				lo, hi := max(0, i-120), min(len(raw), i+60)
				t.Errorf("%q (README: encrypted) is in the raw database in plaintext: …%q…", s, raw[lo:hi])
			}
		}
		for _, s := range visible {
			if !strings.Contains(raw, s) {
				t.Errorf("%q (README: plaintext) not found in the raw database: the scan does not see the data", s)
			}
		}
	}

	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv("MEMVAULT_DSN", "")
		t.Setenv("DATABASE_URL", "")
		t.Setenv("MEMVAULT_DB", filepath.Join(dir, "agent.db"))
		t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)
		write(t)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var raw strings.Builder
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			raw.Write(b)
		}
		check(t, raw.String())
	})

	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		t.Setenv("MEMVAULT_DSN", dsn)
		t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)
		write(t)
		var raw strings.Builder
		for tb, rows := range readmetest.DumpPostgres(t, dsn) {
			raw.WriteString(tb + ": " + rows + "\n")
		}
		check(t, raw.String())
	})

	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		t.Setenv("MEMVAULT_DSN", dsn)
		t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)
		write(t)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema)||'.'||quote_ident(table_name) FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(tables) == 0 {
			t.Fatal("no table in the test's schema")
		}
		var raw strings.Builder
		for _, tb := range tables {
			// bytea columns print as hex in row text; convert_from finds
			// plaintext held in them too.
			rows, err := conn.Query(ctx, `SELECT t::text FROM `+tb+` t`)
			if err != nil {
				t.Fatal(err)
			}
			texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			raw.WriteString(tb + ": " + strings.Join(texts, "\n") + "\n")
			cols, err := conn.Query(ctx, `SELECT quote_ident(column_name) FROM information_schema.columns
				WHERE table_schema = current_schema() AND quote_ident(table_schema)||'.'||quote_ident(table_name) = $1 AND data_type = 'bytea'`, tb)
			if err != nil {
				t.Fatal(err)
			}
			names, err := pgx.CollectRows(cols, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range names {
				rows, err := conn.Query(ctx, `SELECT encode(`+c+`, 'escape') FROM `+tb+` WHERE `+c+` IS NOT NULL`)
				if err != nil {
					t.Fatal(err)
				}
				vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				raw.WriteString(strings.Join(vals, "\n"))
			}
		}
		check(t, raw.String())
	})
}
