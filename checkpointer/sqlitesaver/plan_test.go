package sqlitesaver

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// TestQueryPlansUseIndexes runs EXPLAIN QUERY PLAN on the saver's own
// statements (its prepared set, List's builder and DeleteThread's), over
// a few thousand checkpoints after ANALYZE, and checks that each searches
// the tables by an index or the primary key and never scans one: their
// cost must follow the thread, not the table.
func TestQueryPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, filepath.Join(t.TempDir(), "plan.db"), Options{})
	err := s.d.db.Write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`WITH RECURSIVE th(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM th WHERE n < 400),
				c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10)
			INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
			SELECT 't' || th.n, '', printf('%08d', c.n), CASE WHEN c.n > 1 THEN printf('%08d', c.n - 1) END,
				json_object('v', 4, 'id', printf('%08d', c.n), 'channel_versions', json_object('messages', c.n, 'context', 1)),
				json_object('source', 'loop', 'step', c.n, 'run_id', 'run-' || th.n)
			FROM th, c`,
			`INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
			SELECT thread_id, '', 'messages', CAST(json_extract(checkpoint, '$.channel_versions.messages') AS TEXT), 'json', randomblob(200) FROM checkpoints`,
			`INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
			SELECT thread_id, '', checkpoint_id, 'task', '', i.n, 'messages', 'json', x'31' FROM checkpoints,
				(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2) i`,
			`ANALYZE`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	ns := ""
	listWhereArgs := func(q checkpointer.DriverQuery, paged bool) (string, []any) {
		where, args := listWhere(q)
		if paged {
			args = append(args, "00000008", "00000008", "00000008", "t7", "t7", "")
		}
		return listSQL(where, paged), append(args, 10)
	}
	list, listArgs := listWhereArgs(checkpointer.DriverQuery{Thread: "t7", NS: &ns, Limit: 10}, false)
	page, pageArgs := listWhereArgs(checkpointer.DriverQuery{Thread: "t7", NS: &ns, Limit: 10}, true)
	before, beforeArgs := listWhereArgs(checkpointer.DriverQuery{Thread: "t7", NS: &ns, Before: "00000005"}, false)
	allNS, allNSArgs := listWhereArgs(checkpointer.DriverQuery{Thread: "t7"}, false)
	cases := []struct {
		name string
		sql  string
		args []any
	}{
		{"get_tuple latest", sqlLatest, []any{"t7", ""}},
		{"get_tuple by id", sqlByID, []any{"t7", "", "00000004"}},
		{"get_tuple values", sqlBlobs, []any{"t7", "", `[["messages","4"],["context","1"]]`}},
		{"get_tuple writes", sqlWrites, []any{"t7", "", `["00000004"]`}},
		{"get_tuple sends", sqlSends, []any{"t7", "", "00000003", checkpointer.ChannelTasks}},
		{"list limit 10", list, listArgs},
		{"list next page", page, pageArgs},
		{"list before", before, beforeArgs},
		{"list all namespaces", allNS, allNSArgs},
		{"put value", sqlPutBlob, []any{"t7", "", "messages", "99", "json", []byte("1")}},
		{"put checkpoint", sqlPutCheckpoint, []any{"t7", "", "00000099", "00000010", "{}", "{}"}},
		{"put_writes", sqlInsertWrite, []any{"t7", "", "00000010", "task2", "", 0, "messages", "json", []byte("1")}},
		{"put_writes upsert", sqlUpsertWrite, []any{"t7", "", "00000010", "task2", "", 0, "messages", "json", []byte("1")}},
		{"delete_thread checkpoints", deleteThreadSQL("checkpoints"), []any{`["t7", "t8"]`}},
		{"delete_thread values", deleteThreadSQL("checkpoint_blobs"), []any{`["t7", "t8"]`}},
		{"delete_thread writes", deleteThreadSQL("checkpoint_writes"), []any{`["t7", "t8"]`}},
	}
	// A full scan reads "SCAN checkpoints"; a probe reads "SEARCH
	// checkpoints USING INDEX ..." (or PRIMARY KEY, or COVERING INDEX).
	scan := regexp.MustCompile(`^SCAN (checkpoints|checkpoint_blobs|checkpoint_writes)\b`)
	search := regexp.MustCompile(`^SEARCH (checkpoints|checkpoint_blobs|checkpoint_writes)( AS \w+)? USING (COVERING )?(INDEX|PRIMARY KEY)`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := s.d.db.Reader().QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.sql, c.args...)
			if err != nil {
				t.Fatalf("explain: %v\n%s", err, c.sql)
			}
			defer rs.Close()
			var plan []string
			searched := false
			for rs.Next() {
				var id, parent, notused int
				var detail string
				if err := rs.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
				if scan.MatchString(detail) {
					t.Errorf("%s: %s", c.name, detail)
				}
				searched = searched || search.MatchString(detail)
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			// An INSERT's plan is empty (the conflict target is the
			// primary key); anything that reads must search.
			if !searched && !strings.HasPrefix(strings.TrimSpace(c.sql), "INSERT") {
				t.Errorf("%s: no index search in the plan", c.name)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("plan:\n%s", strings.Join(plan, "\n"))
			}
		})
	}
}
