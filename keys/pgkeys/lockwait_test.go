package pgkeys_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestStartErasureGivesUpOnAnOpenWrite: a write of the subject that holds
// its key's row (FenceSQL, FOR SHARE) and stays open makes StartErasure
// wait at most the key table's lock wait (10 s), then fail saying so —
// nothing destroyed, so a later try erases — instead of waiting for ever.
// It takes those 10 s.
func TestStartErasureGivesUpOnAnOpenWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the key table's 10 s lock wait")
	}
	ctx := context.Background()
	pool, _ := pgtest.Schema(t)
	tb, err := pgkeys.New(pool, pgkeys.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	k := keys.WrappedKey{Subject: "carol", Version: 1, ID: "00aa11bb22cc33dd", KEK: "kek-1", Wrapped: []byte("wrapped"), Created: time.Now()}
	if err := tb.Insert(ctx, k); err != nil {
		t.Fatal(err)
	}
	write, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = write.Rollback(ctx) }()
	if _, err := write.Exec(ctx, tb.FenceSQL(), k.Subject, k.ID); err != nil {
		t.Fatal(err)
	}

	// Bounded here too, so that a lost lock wait fails the test instead
	// of hanging it.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = tb.StartErasure(wctx, "carol", time.Now())
	var pgErr *pgconn.PgError
	if err == nil || !strings.Contains(err.Error(), "stayed locked for 10s") || !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("StartErasure while a write holds carol's key: %v; want the lock wait's error (55P03)", err)
	}
	if got, err := tb.Keys(ctx, "carol"); err != nil || len(got) != 1 {
		t.Fatalf("carol's keys after the erasure gave up: %d, %v; want 1 (nothing destroyed)", len(got), err)
	}
	// Once the write ends, the erasure goes through.
	if err := write.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.StartErasure(ctx, "carol", time.Now()); err != nil {
		t.Fatalf("StartErasure once the write committed: %v", err)
	}
	if got, err := tb.Keys(ctx, "carol"); err != nil || len(got) != 0 {
		t.Fatalf("carol's keys after the erasure: %d, %v; want none", len(got), err)
	}
}
