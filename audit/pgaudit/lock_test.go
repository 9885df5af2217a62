package pgaudit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestAppendLockPerSchema (session 39, carried as "pgaudit lock key shared
// across schemas"): the advisory lock a trail's appenders take derived
// from the table's name as the Options gave it, so every trail named by
// the search path (Options{}) took the same key, whatever its schema: two
// trails in two schemas of one database waited for each other, and a read
// chaining its own record left it pending when another trail's appender
// held the lock. The key now derives from the table's schema. Here trail A
// holds its lock (an append stopped in its transaction) while trail B, in
// another schema, appends: B completes instead of waiting for A until its
// deadline. With the schemas named in the Options too, which had a key
// each already.
func TestAppendLockPerSchema(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "search path", true: "named"}[named], func(t *testing.T) {
			ctx := t.Context()
			poolA, schemaA := pgtest.Schema(t)
			poolB, schemaB := pgtest.Schema(t)
			table := func(pool *pgxpool.Pool, schema string) *pgaudit.Table {
				var opts pgaudit.Options
				if named {
					opts.Schema = schema
				}
				tb, err := pgaudit.New(pool, opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := tb.Setup(ctx); err != nil {
					t.Fatal(err)
				}
				return tb
			}
			a, b := table(poolA, schemaA), table(poolB, schemaB)
			trB, err := audit.NewTrail(b, audit.Options{Key: []byte("0123456789abcdef0123456789abcdef"), DatabaseID: "b"})
			if err != nil {
				t.Fatal(err)
			}

			held, release := make(chan struct{}), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- a.Append(ctx, func(*audit.Record) ([]audit.Record, error) {
					close(held) // A's transaction holds its lock
					<-release
					return nil, errors.New("stopped appender")
				})
			}()
			select {
			case <-held:
			case err := <-done:
				t.Fatalf("trail A's append ended before holding its lock: %v", err)
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = trB.Log(wctx, audit.OpCheckpointWrite, "thread-b", "", "")
			cancel()
			close(release)
			<-done
			if err != nil {
				t.Fatalf("trail B's append while trail A holds its lock: %v", err)
			}
			if err := trB.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			n := 0
			if err := trB.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Target == "thread-b" {
					n++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("trail B holds %d records of thread-b, want 1", n)
			}
		})
	}
}

// TestAppendLockOneTrailTwoNames: one trail named by the search path
// (Options{}) and by its schema (Options.Schema) takes one lock, so that
// appenders naming it either way take turns (before session 39 the two
// keys differed).
func TestAppendLockOneTrailTwoNames(t *testing.T) {
	ctx := t.Context()
	pool, schema := pgtest.Schema(t)
	var keys []int64
	for _, opts := range []pgaudit.Options{{}, {Schema: schema}} {
		tb, err := pgaudit.New(pool, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		k, err := tb.AppendLock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if keys[0] != keys[1] {
		t.Errorf("lock of the trail by search path %d, by schema %q %d", keys[0], schema, keys[1])
	}
}
