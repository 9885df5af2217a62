package pgfence_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
	// Drain is seen waiting: it counted the older transaction (n > 0),
	// then asked again, not having returned; only then does the
	// transaction end.
	polls := &pollCounter{Pool: pool, waiting: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- pgfence.Drain(ctx, codec, polls) }()
	select {
	case <-polls.waiting:
	case err := <-done:
		t.Fatalf("Drain returned (%v) while an older transaction was open", err)
	case <-time.After(time.Minute):
		t.Fatal("Drain neither returned nor counted the older transactions again in a minute")
	}
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

// pollCounter is the pool Drain reads the server's activity with, telling
// the test (closing waiting) when Drain asks again for the count of older
// transactions after one of its counts found some: it is waiting for them.
type pollCounter struct {
	*pgxpool.Pool
	waiting chan struct{}
	mu      sync.Mutex
	saw     bool // a count found older transactions
	once    sync.Once
}

// QueryRow implements pgfence.Querier.
func (p *pollCounter) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !strings.Contains(sql, "pg_stat_activity") {
		return p.Pool.QueryRow(ctx, sql, args...)
	}
	p.mu.Lock()
	if p.saw {
		p.once.Do(func() { close(p.waiting) })
	}
	p.mu.Unlock()
	return countRow{p.Pool.QueryRow(ctx, sql, args...), p}
}

// countRow notes a count of older transactions above 0.
type countRow struct {
	pgx.Row
	p *pollCounter
}

func (r countRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if n, ok := dest[0].(*int); err == nil && ok && *n > 0 {
		r.p.mu.Lock()
		r.p.saw = true
		r.p.mu.Unlock()
	}
	return err
}
