package vault

import (
	"context"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// TestForgetThreadWithOnlyWrites: a thread of the subject that holds only
// pending writes (put_writes for a checkpoint never stored, or whose
// checkpoints a prune or retention removed) is deleted by forget too, on
// SQLite and PostgreSQL as on MongoDB (TestMongoForgetThreadWithOnlyWrites).
func TestForgetThreadWithOnlyWrites(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
				t.Fatal(err)
			}
			cfg := checkpointer.Config{ThreadID: "carol:2", CheckpointID: checkpointer.NewID(0)}
			if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "carol's pending note"}}, "task-1", ""); err != nil {
				t.Fatalf("put_writes of a thread without checkpoints: %v", err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			var n int
			q := `SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'carol:2'`
			if h.Pool != nil {
				err = h.Pool.QueryRow(ctx, q).Scan(&n)
			} else {
				db := openRaw(t, c.DBPath)
				defer db.Close()
				err = db.QueryRowContext(ctx, q).Scan(&n)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("%d pending writes of carol:2 stay after Forget(carol)", n)
			}
		})
	}
}
