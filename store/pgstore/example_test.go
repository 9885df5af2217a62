package pgstore_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// A store with semantic search over the "text" field. Setup prints the DDL
// it would run; pgxpool connects lazily, so nothing here needs a server.
func ExampleNew() {
	pool, err := pgxpool.New(context.Background(), "postgres://app@db.internal/agents")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	s, err := pgstore.New(pool, pgstore.Options{
		Index: &store.IndexConfig{
			Embedder: embeddings.NewUnkeyedHashing(1536),
			Fields:   []string{"text"},
		},
		ANN: pgstore.ANNConfig{M: 16, EFConstruction: 128},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for _, stmt := range s.SetupStatements() {
		fmt.Println(stmt)
	}
	// In a program: s.Setup(ctx), then s.Put, s.Search, ...

	// Output:
	// CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)
	// store_migrations 0: CREATE TABLE IF NOT EXISTS store (prefix text NOT NULL, key text NOT NULL, value jsonb NOT NULL, created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP, updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key))
	// store_migrations 1: CREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops)
	// store_migrations 2: ALTER TABLE store ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE, ADD COLUMN IF NOT EXISTS ttl_minutes INT
	// store_migrations 3: CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL
	// CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY)
	// vector_migrations 0: DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN CREATE EXTENSION vector; END IF; END $$
	// vector_migrations 1: CREATE TABLE IF NOT EXISTS store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding vector(1536), created_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP, updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key, field_name), FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE)
	// vector_migrations 2: CREATE INDEX CONCURRENTLY IF NOT EXISTS store_vectors_embedding_idx ON store_vectors USING hnsw (embedding vector_cosine_ops) WITH (m=16, ef_construction=128)
	// CREATE TABLE IF NOT EXISTS memvault_vector_migrations (v INTEGER PRIMARY KEY)
	// memvault_vector_migrations 0: CREATE TABLE IF NOT EXISTS memvault_store_embedder (id INTEGER PRIMARY KEY CHECK (id = 0), name TEXT NOT NULL)
	// memvault_vector_migrations 1: ALTER TABLE memvault_store_embedder ADD COLUMN IF NOT EXISTS dims INTEGER
}
