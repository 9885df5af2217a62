package pgsaver

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// noFence is the fence of rows sealed under no subject's key.
type noFence struct{}

func (noFence) Check(context.Context) error { return nil }
func (noFence) Statements() ([]checkpointer.FenceStatement, bool) {
	return nil, true
}

// TestWriteGroupFailingStatement: in a group of five puts, the third's
// audit record is refused by a constraint, which aborts the batch's
// transaction; the third fails with the constraint's error and stores
// nothing, the four others are stored (sent again without it).
func TestWriteGroupFailingStatement(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := t.Context()
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE group_records (target text CHECK (target <> 'refused'))`); err != nil {
		t.Fatal(err)
	}
	ops := make([]checkpointer.GroupOp, 5)
	for i := range ops {
		target := fmt.Sprint(i)
		if i == 2 {
			target = "refused"
		}
		ops[i] = checkpointer.GroupOp{Put: &checkpointer.PutRows{Thread: fmt.Sprintf("f-%d", i), ID: checkpointer.NewID(0), V: 4,
			Doc: []byte(`{"v": 4, "channel_values": {}, "channel_versions": {}, "versions_seen": {}}`), Meta: []byte(`{}`),
			Fence: noFence{}, Record: &checkpointer.RecordRow{Table: "group_records", Columns: []string{"target"}, Values: []any{target}}}}
	}
	errs := s.driver().WriteGroup(ctx, ops)
	for i, err := range errs {
		var pe *pgconn.PgError
		if i == 2 {
			if !errors.As(err, &pe) || pe.Code != "23514" {
				t.Errorf("op 2 (record refused): %v, want a check violation", err)
			}
		} else if err != nil {
			t.Errorf("op %d: %v", i, err)
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, ops[i].Put.Thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := min(1, (i-2)*(i-2)); n != want {
			t.Errorf("op %d: %d checkpoints stored, want %d", i, n, want)
		}
	}
	var records int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM group_records`).Scan(&records); err != nil {
		t.Fatal(err)
	}
	if records != 4 {
		t.Errorf("%d records stored, want 4", records)
	}
}
