package pgfence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDrainWaitsForOlderTransactions: with the key table apart from the
// data, an erasure's Drain waits for a transaction of the data database
// that began before it (a write that may have checked a key before the
// keys were destroyed), and only for such.
func TestDrainWaitsForOlderTransactions(t *testing.T) {
	ctx := t.Context()
	pool, _ := pgtest.Schema(t)
	codec := binding.New(keystest.NewHierarchy(t, memkeys.New(), keys.Subjects{ThreadSeparator: ":"}))
	if codec.FencesInSQL() {
		t.Fatal("a key table in memory fences in SQL")
	}
	writer, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(context.Background())
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := pgfence.Drain(short, codec, pool); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain with an older transaction open: %v, want it to wait", err)
	}
	done := make(chan error, 1)
	go func() { done <- pgfence.Drain(ctx, codec, pool) }()
	time.Sleep(100 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drain after the transaction ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not return after the older transaction ended")
	}
}
