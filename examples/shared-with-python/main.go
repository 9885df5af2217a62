// Shared-with-python writes checkpoints that a Python LangGraph service
// reads from the same PostgreSQL tables. In LangGraph-compatible mode
// memvault encrypts values in LangGraph's own "aes" format, with AES-GCM,
// under LANGGRAPH_AES_KEY read as Python reads it: 16, 24 or 32 raw
// characters. Python reads the rows with
// EncryptedSerializer.from_pycryptodome_aes(mode=AES.MODE_GCM).
//
// Run it from the repository root:
//
//	MEMVAULT_DSN=postgres://user:pass@localhost:5432/app go run ./examples/shared-with-python
//
// LANGGRAPH_AES_KEY is used when set; otherwise a key is made for this run
// and printed. Without MEMVAULT_DSN the rows go to a SQLite file (MEMVAULT_DB,
// or one in a temporary directory): the same rows and formats, but Python's
// own SqliteSaver uses another schema, so share through PostgreSQL.
//
// The program prints what Python sees in the tables, decrypts one value with
// nothing but the key and Go's standard library to show the layout, and
// prints the Python that reads the thread.
package main

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver, to look at the raw rows

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

const threadID = "shared-with-python"

func main() {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Encryption = config.EncryptionLangGraph // LangGraph's "aes" format, AES-GCM
	cfg.Embeddings = "none"
	cfg.Keys.Primary = pythonKey()
	cfg.DSN, cfg.DBPath = os.Getenv("MEMVAULT_DSN"), os.Getenv("MEMVAULT_DB")
	if cfg.DSN == "" && cfg.DBPath == "" {
		dir, err := os.MkdirTemp("", "memvault-shared-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		cfg.DBPath = filepath.Join(dir, "shared.db")
	}
	h, err := vault.Open(ctx, cfg)
	if err != nil {
		log.Fatalf("open: %v", err)
	}
	defer h.Close()

	// A checkpoint with two channels, and a pending write against it.
	thread := checkpointer.Config{ThreadID: threadID}
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(-1), TS: time.Now().UTC(),
		ChannelValues: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "Where is my parcel?"}},
			"order":    map[string]any{"id": 1234, "status": "late"},
		},
		ChannelVersions: map[string]string{"messages": h.Saver.NextVersion(""), "order": h.Saver.NextVersion("")},
	}
	saved, err := h.Saver.Put(ctx, thread, cp, checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
	if err != nil {
		log.Fatalf("save checkpoint: %v", err)
	}
	write := []checkpointer.Write{{Channel: "messages", Value: map[string]any{"role": "assistant", "content": "Let me check."}}}
	if err := h.Saver.PutWrites(ctx, saved, write, "task-1", ""); err != nil {
		log.Fatalf("save pending write: %v", err)
	}
	fmt.Printf("wrote checkpoint %s of thread %q (%s)\n", saved.CheckpointID, threadID, h.Backend)

	// What Python reads: the type tag tells it the inner format (json) and
	// the cipher (aes); the blob is nonce(16) || tag(16) || ciphertext.
	queryRow, closeRaw := rawRows(ctx, h, cfg.DBPath)
	defer closeRaw()
	blobs := map[string][]byte{}
	for _, ch := range []string{"messages", "order"} {
		var typ string
		var blob []byte
		err := queryRow(`SELECT type, blob FROM checkpoint_blobs
			WHERE thread_id = $1 AND checkpoint_ns = '' AND channel = $2 AND version = $3`,
			threadID, ch, cp.ChannelVersions[ch]).Scan(&typ, &blob)
		if err != nil {
			log.Fatalf("read blob of %s: %v", ch, err)
		}
		fmt.Printf("checkpoint_blobs  %-8s  type %s  %s\n", ch, typ, layout(blob))
		blobs[ch] = blob
	}
	var wtyp string
	var wblob []byte
	err = queryRow(`SELECT type, blob FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_id = $2`,
		threadID, saved.CheckpointID).Scan(&wtyp, &wblob)
	if err != nil {
		log.Fatalf("read pending write: %v", err)
	}
	fmt.Printf("checkpoint_writes %-8s  type %s  %s\n", "messages", wtyp, layout(wblob))

	// The layout, proved: open the order's blob with the raw key and AES-GCM
	// from Go's standard library (Go's GCM wants the tag after the
	// ciphertext).
	blob := blobs["order"]
	if len(blob) < 32 {
		log.Fatalf("blob of order: %d bytes, too short", len(blob))
	}
	block, err := aes.NewCipher([]byte(cfg.Keys.Primary))
	if err != nil {
		log.Fatal(err)
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, 16)
	if err != nil {
		log.Fatal(err)
	}
	nonce, tag, ct := blob[:16], blob[16:32], blob[32:]
	plain, err := gcm.Open(nil, nonce, append(append([]byte{}, ct...), tag...), nil)
	if err != nil {
		log.Fatalf("decrypt with the raw key: %v", err)
	}
	fmt.Printf("decrypted with crypto/aes and the raw key alone: %s\n", plain)

	if h.Backend == config.BackendSQLite {
		fmt.Println("\n(These rows are in SQLite; Python's SqliteSaver has a schema of its own. Set MEMVAULT_DSN to share them through PostgreSQL.)")
	}
	fmt.Print(pythonSnippet)
}

// pythonKey returns LANGGRAPH_AES_KEY, or a new key when it is unset.
// Python uses the variable's characters as the AES key, so it must be 16, 24
// or 32 raw characters; the base64: and hex: forms are memvault's own.
func pythonKey() string {
	key := os.Getenv("LANGGRAPH_AES_KEY")
	if strings.HasPrefix(key, "base64:") || strings.HasPrefix(key, "hex:") {
		log.Fatal("Python reads LANGGRAPH_AES_KEY as raw characters: use a 16, 24 or 32-character key, not base64: or hex:")
	}
	if key == "" {
		var err error
		if key, err = config.GenerateRawKey(); err != nil { // 32 characters: AES-256
			log.Fatal(err)
		}
		fmt.Printf("LANGGRAPH_AES_KEY is unset; made one for this run (Python needs it too):\n  export LANGGRAPH_AES_KEY='%s'\n", key)
	}
	return key
}

// row is one result row: a pgx.Row or an *sql.Row.
type row interface{ Scan(dest ...any) error }

// rawRows returns a function that queries the tables directly, as any other
// client of the database would, and a function that closes what it opened.
func rawRows(ctx context.Context, h *vault.Handle, dbPath string) (queryRow func(query string, args ...any) row, close func()) {
	if h.Pool != nil {
		return func(q string, args ...any) row { return h.Pool.QueryRow(ctx, q, args...) }, func() {}
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		log.Fatal(err)
	}
	return func(q string, args ...any) row { return db.QueryRowContext(ctx, q, args...) }, func() { db.Close() }
}

// layout shows the parts of an "aes" blob.
func layout(b []byte) string {
	if len(b) < 32 {
		return fmt.Sprintf("%d bytes: too short for nonce and tag", len(b))
	}
	return fmt.Sprintf("nonce %x… | tag %x… | ciphertext %d bytes", b[:4], b[16:20], len(b)-32)
}

const pythonSnippet = `
Python reads this thread (pip install langgraph-checkpoint-postgres "psycopg[binary]" pycryptodome),
with the same LANGGRAPH_AES_KEY in its environment:

    import os
    from Crypto.Cipher import AES
    from psycopg import connect
    from psycopg.rows import dict_row
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    serde = EncryptedSerializer.from_pycryptodome_aes(mode=AES.MODE_GCM)  # key: LANGGRAPH_AES_KEY
    with connect(os.environ["MEMVAULT_DSN"], autocommit=True, prepare_threshold=0,
                 row_factory=dict_row) as conn:
        saver = PostgresSaver(conn, serde=serde)
        t = saver.get_tuple({"configurable": {"thread_id": "shared-with-python"}})
        print(t.checkpoint["channel_values"])  # {'messages': [...], 'order': {'id': 1234, ...}}
        print(t.pending_writes)                 # [('task-1', 'messages', {...})]
`
