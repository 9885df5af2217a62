package jsrows

import (
	"context"
	_ "embed" // JSRowsSQL
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// JSRowsSQL is testdata/js_rows.sql: the checkpoint tables exactly as JS
// LangGraph's PostgresSaver (@langchain/langgraph-checkpoint-postgres 1.0.5)
// created and filled them (migrations 0..4, no task_path column) when it
// wrote the threads JSGraphThread, JSSendsThread and JSRealGraphThread.
// Table names are unqualified: load it with [Exec] on a connection whose
// search_path starts with the target schema. testdata/js_rows.json holds the checkpoint ids and
// JS's own reading of the rows.
//
//go:embed testdata/js_rows.sql
var JSRowsSQL string

// Thread ids in JSRowsSQL.
const (
	// JSGraphThread is a support conversation: an input checkpoint, two
	// loop steps, a subgraph namespace, LangChain messages, Set, Map,
	// Uint8Array and undefined values, null values, a consumed channel
	// ("empty" blob), pending writes to __interrupt__ and __error__.
	JSGraphThread = "js-graph"
	// JSSendsThread holds two v1 checkpoints whose pending sends are
	// __pregel_tasks writes on the parent checkpoint.
	JSSendsThread = "js-sends"
	// JSRealGraphThread was written by a real JS StateGraph
	// (@langchain/langgraph 1.7.3: agent -> lookup subgraph -> review) that
	// stopped at an interrupt() waiting for approval: LangGraph's own
	// channels (branch:to:*, __start__), task ids and a subgraph namespace.
	JSRealGraphThread = "js-real-graph"
)

// Execer runs one SQL statement; *pgxpool.Pool, *pgx.Conn and pgx.Tx all
// satisfy it.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Statements splits a SQL script in the form this package writes into its
// statements: lines starting with "--" are comments, and a statement ends
// with a line ending in ";". Statements are returned without the final ";";
// empty ones are dropped.
func Statements(script string) []string {
	var out []string
	var cur []string
	for line := range strings.Lines(script) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")) {
			continue
		}
		cur = append(cur, line)
		if strings.HasSuffix(trimmed, ";") {
			stmt := strings.TrimSpace(strings.Join(cur, "\n"))
			if stmt = strings.TrimSpace(strings.TrimSuffix(stmt, ";")); stmt != "" {
				out = append(out, stmt)
			}
			cur = cur[:0]
		}
	}
	if stmt := strings.TrimSpace(strings.Join(cur, "\n")); stmt != "" {
		out = append(out, stmt)
	}
	return out
}

// Exec runs the statements of script (see [Statements]) one by one on db,
// stopping at the first error, which names the statement's position.
func Exec(ctx context.Context, db Execer, script string) error {
	for i, stmt := range Statements(script) {
		if _, err := db.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("interop: statement %d: %w", i+1, err)
		}
	}
	return nil
}
