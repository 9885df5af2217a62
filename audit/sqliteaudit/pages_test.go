package sqliteaudit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// TestAuditedWriteOnePendingPage: the record an audited write inserts in
// its own transaction (the trail in the data file) dirties one page of
// the file more than the write alone, not two. Every page a write
// transaction dirties is a frame of the write-ahead log, written and
// checksummed at its commit and copied into the file by the next
// checkpoint; the pending records' table with a rowid and an index on its
// TEXT key cost each audited put or put_writes a page of each (migration
// 05 makes it one b-tree). Counted in frames of the log: n puts with and
// without a record, the log truncated before each run, so the count does
// not depend on the machine or its load.
func TestAuditedWriteOnePendingPage(t *testing.T) {
	ctx := audit.WithPrincipal(context.Background(), "pages")
	path := filepath.Join(t.TempDir(), "data.db")
	inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	tb, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pageSize int64
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	walFrames := func() int64 {
		t.Helper()
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		const walHeader, frameHeader = 32, 24
		return (fi.Size() - walHeader) / (pageSize + frameHeader)
	}
	// frames runs n puts on thread (each with its record in its
	// transaction when recorded) and returns how many frames of the log
	// they wrote: the log is truncated before each, and its record
	// chained after it (as the chainer does, a pending record lives a few
	// milliseconds), so each put finds the pending table as an audited
	// process keeps it.
	step := 0
	frames := func(thread string, n int, recorded bool) (sum int64) {
		t.Helper()
		for range n {
			if _, err := db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			step++
			v := fmt.Sprint(step)
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), TS: time.Now(),
				ChannelValues: map[string]any{"a": v}, ChannelVersions: map[string]string{"a": v}}
			wctx := ctx
			if recorded {
				row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: thread})
				if err != nil || !ok {
					t.Fatalf("RecordInTx: %v, %v", ok, err)
				}
				wctx = checkpointer.WithRecord(ctx, row)
			}
			if _, err := inner.Put(wctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, map[string]string{"a": v}); err != nil {
				t.Fatal(err)
			}
			sum += walFrames()
			if err := tr.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return sum
	}
	frames("warm", 20, true) // tables' first pages, statements prepared
	const n = 40
	plain := frames("plain", n, false)
	recorded := frames("recorded", n, true)
	if extra := recorded - plain; extra > n+n/10 {
		t.Errorf("%d puts with their records in their transactions wrote %d frames to the log, %d without: %.2f pages a record, want 1",
			n, recorded, plain, float64(extra)/n)
	} else {
		t.Logf("%d puts: %d frames with records, %d without (%.2f pages a record)", n, recorded, plain, float64(extra)/n)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
