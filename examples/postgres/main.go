// Postgres shows memvault inside an application's own PostgreSQL
// transactions. Opening a support ticket writes three things: the app's row
// in its own tickets table, the agent's first checkpoint (encrypted) and a
// memory about the customer (encrypted, searchable by meaning). They commit
// together, or roll back together.
//
// It needs a PostgreSQL database with the pgvector extension available:
//
//	MEMVAULT_DSN=postgres://user:pass@localhost:5432/app go run ./examples/postgres
//
// The tables (LangGraph's checkpoint and store tables, and tickets) are
// created in the schema the connection's search_path selects. Values are
// encrypted with LANGGRAPH_AES_KEY when it is set, otherwise with a demo key
// made for this run.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// app is the application: its pool and memvault's saver and store on it.
type app struct {
	pool  *pgxpool.Pool
	saver *pgsaver.Saver
	store *pgstore.Store
}

func main() {
	dsn := os.Getenv("MEMVAULT_DSN")
	if dsn == "" {
		fmt.Fprintln(os.Stderr, "this example needs PostgreSQL: set MEMVAULT_DSN, e.g. MEMVAULT_DSN=postgres://localhost:5432/postgres")
		os.Exit(2)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	defer pool.Close()

	// One encrypting serializer for the checkpoints and the memories.
	ser, err := encryption()
	if err != nil {
		log.Fatal(err)
	}
	saver, err := pgsaver.New(pool, pgsaver.Options{Serde: ser})
	if err != nil {
		log.Fatal(err)
	}
	emb := embeddings.NewUnkeyedHashing(256) // offline; see embeddings/openai for a model
	st, err := pgstore.New(pool, pgstore.Options{
		Serde: ser,
		Index: &store.IndexConfig{Dims: emb.Dims(), Embedder: emb, Fields: []string{"text"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	// Migrate: LangGraph's tables (a no-op when they are up to date), then ours.
	if err := saver.Setup(ctx); err != nil {
		log.Fatalf("setup saver: %v", err)
	}
	if err := st.Setup(ctx); err != nil {
		log.Fatalf("setup store: %v", err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS tickets (
		thread_id text PRIMARY KEY,
		customer  text NOT NULL,
		subject   text NOT NULL
	)`); err != nil {
		log.Fatalf("create tickets: %v", err)
	}
	a := &app{pool: pool, saver: saver, store: st}
	run := rand.Text()[:6] // fresh thread ids, so the example can run again

	// A ticket that commits.
	committed := "ticket-" + run + "-1"
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { // commits unless fn fails
		return a.openTicket(ctx, tx, committed, "alice", "parcel is late", "prefers email, never phone calls")
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("transaction 1: ticket, checkpoint and memory committed")
	a.show(ctx, committed, "alice")

	// A ticket whose transaction rolls back (say, a later step failed):
	// none of its three writes remain.
	rolledBack := "ticket-" + run + "-2"
	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := a.openTicket(ctx, tx, rolledBack, "bob", "refund please", "wants a refund to his card"); err != nil {
		log.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		log.Fatalf("rollback: %v", err)
	}
	fmt.Println("transaction 2: ticket, checkpoint and memory rolled back")
	a.show(ctx, rolledBack, "bob")
}

// openTicket writes the ticket row, the conversation's first checkpoint and
// a memory about the customer, all in tx.
func (a *app) openTicket(ctx context.Context, tx pgx.Tx, thread, customer, subject, memory string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO tickets (thread_id, customer, subject) VALUES ($1, $2, $3)`, thread, customer, subject); err != nil {
		return fmt.Errorf("insert ticket: %w", err)
	}
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(-1), TS: time.Now().UTC(),
		ChannelValues:   map[string]any{"messages": []any{customer + ": " + subject}},
		ChannelVersions: map[string]string{"messages": a.saver.NextVersion("")},
	}
	md := checkpointer.Metadata{"source": "input", "step": -1}
	if _, err := a.saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	ns := store.Namespace{"customers", customer}
	if err := a.store.PutTx(ctx, tx, ns, "preference", map[string]any{"text": memory}); err != nil {
		return fmt.Errorf("save memory: %w", err)
	}
	return nil
}

// show prints what the database holds for a ticket, read outside any
// transaction.
func (a *app) show(ctx context.Context, thread, customer string) {
	var tickets int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM tickets WHERE thread_id = $1`, thread).Scan(&tickets); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("  tickets rows: %d\n", tickets)

	tup, err := a.saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil {
		log.Fatal(err)
	}
	if tup == nil {
		fmt.Println("  checkpoint:   none")
	} else {
		fmt.Printf("  checkpoint:   %q\n", tup.Checkpoint.ChannelValues["messages"])
	}

	hits, err := a.store.Search(ctx, store.Namespace{"customers", customer}, store.SearchOptions{Query: "how to contact the customer", Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	if len(hits) == 0 {
		fmt.Println("  memory:       none")
	} else {
		fmt.Printf("  memory:       %q (semantic search, score %.2f)\n", hits[0].Value["text"], *hits[0].Score)
	}

	// What the table holds: the type tag says the blob is encrypted.
	var typ string
	switch err := a.pool.QueryRow(ctx, `SELECT type FROM checkpoint_blobs WHERE thread_id = $1`, thread).Scan(&typ); {
	case err == nil:
		fmt.Printf("  stored as:    %s (ciphertext in checkpoint_blobs.blob)\n", typ)
	case !errors.Is(err, pgx.ErrNoRows):
		log.Fatal(err)
	}
}

// encryption returns the serializer both use: JsonPlus inside memvault's
// envelope encryption, keyed by LANGGRAPH_AES_KEY or by a random demo key.
func encryption() (serde.Serializer, error) {
	var ring *crypto.Keyring
	var err error
	if os.Getenv(crypto.EnvKey) != "" {
		ring, err = crypto.KeyringFromEnv()
	} else {
		fmt.Println("LANGGRAPH_AES_KEY is unset: encrypting with a random key made for this run")
		b := make([]byte, 32) // AES-256
		rand.Read(b)
		var key *crypto.Key
		if key, err = crypto.NewKey(b); err == nil {
			ring, err = crypto.NewKeyring(key)
		}
	}
	if err != nil {
		return nil, err
	}
	return serde.NewEncrypted(serde.JSONPlus{}, ring)
}
