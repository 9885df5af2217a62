package sqlrows_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/sqlrows"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// rows adapts *sql.Rows to sqlrows.Rows, as the SQLite driver does: its
// Close reports no error because reading to the end reports them (Err).
type rows struct{ *sql.Rows }

func (r rows) Close() { _ = r.Rows.Close() }

// A driver spells its statements with sqlrows and reads their rows with
// it, whatever its database client: here database/sql on a SQLite file
// that the SQLite saver wrote.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-sqlrows")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.db")

	saver, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, thread := range []string{"t-b", "t-a", "t-c"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(-1),
			ChannelValues: map[string]any{"x": 1}, ChannelVersions: map[string]string{"x": saver.NextVersion("")}}
		if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": -1}, cp.ChannelVersions); err != nil {
			fmt.Println(err)
			return
		}
	}
	saver.Close()

	db, err := sql.Open(sqlitedb.DriverName, "file:"+path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	q := sqlrows.QueryOf(func(ctx context.Context, stmt string, args ...any) (rows, error) {
		rs, err := db.QueryContext(ctx, stmt, args...)
		return rows{rs}, err
	})

	// One page of thread ids after "t-a", in key order.
	stmt := sqlrows.ThreadsSQL("checkpoints", "?", "?")
	fmt.Println(stmt)
	page, err := sqlrows.Threads(ctx, q, stmt, "t-a", 10)
	fmt.Println(page, err)

	// Every row of one thread, as the core reads a thread to copy it.
	stmts := sqlrows.Tables{Checkpoints: "checkpoints", Blobs: "checkpoint_blobs", Writes: "checkpoint_writes"}.ThreadSQL("?")
	tr, err := sqlrows.Thread(ctx, q, stmts, "t-b")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tr.Checkpoints), len(tr.Values), len(tr.Writes), tr.Values[0].Channel)

	// A list's key conditions, each with one "?" parameter.
	ns := ""
	conds, args := sqlrows.Where(checkpointer.DriverQuery{Thread: "t-b", NS: &ns})
	fmt.Println(strings.Join(conds, " AND "), args)
	// Output:
	// SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id > ? ORDER BY thread_id LIMIT ?
	// [t-b t-c] <nil>
	// 1 1 0 x
	// thread_id = ? AND checkpoint_ns = ? [t-b ]
}
