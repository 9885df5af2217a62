package pgkeys_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// A session holding a snapshot from before the keys were destroyed keeps
// their row in the heap: VACUUM cannot remove it, and the code before
// erasure records reported success with the wrapped key still in the file
// (carved, unwrapped with the master-derived KEK). The purge must report
// the erasure pending while the snapshot lives, and leave no copy of the
// bytes in the table's file once it ends.
func TestPurgeWaitsForASnapshot(t *testing.T) {
	ctx := t.Context()
	pool, schema := pgtest.Schema(t)
	var super bool
	if err := pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || !super {
		t.Skip("reading the heap file needs a superuser")
	}
	tb, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "memvault_data_keys"}.Sanitize()
	holds := func(b []byte) bool {
		t.Helper()
		if _, err := pool.Exec(ctx, `CHECKPOINT`); err != nil {
			t.Fatal(err)
		}
		var heap []byte
		if err := pool.QueryRow(ctx, `SELECT pg_read_binary_file(pg_relation_filepath($1::regclass))`, table).Scan(&heap); err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(heap, b)
	}
	wrapped := make([]byte, 60)
	rand.Read(wrapped)
	now := time.Now().UTC()
	if err := tb.Insert(ctx, keys.WrappedKey{Subject: "carol", Version: 1, ID: "id-carol", KEK: "kek", Wrapped: wrapped, Created: now}); err != nil {
		t.Fatal(err)
	}
	daves := bytes.Repeat([]byte{7}, 60)
	if err := tb.Insert(ctx, keys.WrappedKey{Subject: "dave", Version: 1, ID: "id-dave", KEK: "kek", Wrapped: daves, Created: now}); err != nil {
		t.Fatal(err)
	}
	if !holds(wrapped) {
		t.Fatal("the key is not in the heap before the erasure: the check below proves nothing")
	}

	// Another session, inside a repeatable-read transaction that has read
	// the keys: its snapshot still sees carol's row after the DELETE.
	reader, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(context.Background())
	rtx, err := reader.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 2 {
		t.Fatalf("reader: %d keys, %v", n, err)
	}

	e, err := tb.StartErasure(ctx, "carol", now)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	err = tb.Purge(ctx, e, keys.PurgeOptions{Wait: 500 * time.Millisecond, Progress: func(m string) { said = append(said, m) }})
	if !errors.Is(err, keys.ErrErasurePending) {
		t.Fatalf("purge with a snapshot that sees the key: %v, want ErrErasurePending", err)
	}
	if len(said) == 0 {
		t.Error("the purge waited without saying why")
	}
	if !holds(wrapped) {
		t.Log("the key's row left the heap while the snapshot lived; the pending report was conservative")
	}
	if err := rtx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tb.Purge(ctx, e, keys.PurgeOptions{Wait: 10 * time.Second}); err != nil {
		t.Fatalf("purge after the snapshot ended: %v", err)
	}
	if holds(wrapped) {
		t.Fatal("the destroyed key's bytes are still in the table's heap file")
	}
	if !holds(daves) {
		t.Fatal("dave's key left the heap too")
	}
}
