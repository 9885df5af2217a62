package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestReencryptCompactionPending: while another process (here, the test)
// holds a read transaction on the SQLite database, `keys reencrypt`
// reseals every row but cannot empty the write-ahead log, which still
// holds the rows under the old key: it prints the counts, says what is
// left and how to finish, and exits 1. Run again once the reader is gone,
// it rewrites nothing, compacts and exits 0.
func TestReencryptCompactionPending(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	old := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_EMBEDDINGS=none"}
	for _, k := range []string{"a", "b", "c"} {
		cli(t, old, "", "store", "put", "users", "u", k, `{"text":"secret"}`).must(t, 0)
	}
	rotated := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=fedcba9876543210fedcba9876543210", "LANGGRAPH_AES_KEY_PREVIOUS=" + testKey, "MEMVAULT_EMBEDDINGS=none"}

	reader, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM store`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("reader: %d rows, %v", n, err)
	}
	r := cli(t, rotated, "", "keys", "reencrypt").must(t, 1)
	if !strings.Contains(r.stdout, "rewrote 0 of 0 checkpoint values/writes and 3 of 3 memories") ||
		!strings.Contains(r.stderr, "still holds images of them under the old key") ||
		!strings.Contains(r.stderr, "run `memvault keys reencrypt` again") {
		t.Fatalf("beside a reader:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	reader.Close()
	r = cli(t, rotated, "", "keys", "reencrypt").must(t, 0)
	if !strings.Contains(r.stdout, "rewrote 0 of 0 checkpoint values/writes and 0 of 3 memories") {
		t.Fatalf("again: %q", r.stdout)
	}
}
