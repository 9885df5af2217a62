package postgres

import (
	"context"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/memvault/memvault/internal/pgtest"
)

// BenchmarkVectorParam sends 1536-dimension vectors to PostgreSQL the way
// the store does (text, cast in SQL) and the way pgvector-go does (binary,
// its codec registered on the connection), for an insert and for a search
// query's parameter, on one connection: the measurement behind keeping the
// text form (README, issue 14 item 9).
func BenchmarkVectorParam(b *testing.B) {
	ctx := context.Background()
	pool, _ := pgtest.Schema(b)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	// vp holds 200 rows that searches scan; inserts go to vi.
	if _, err := conn.Exec(ctx, `CREATE TABLE vp (id bigserial PRIMARY KEY, v vector(1536));
		CREATE TABLE vi (id bigserial PRIMARY KEY, v vector(1536))`); err != nil {
		b.Fatal(err)
	}
	if err := pgxvec.RegisterTypes(ctx, conn.Conn()); err != nil {
		b.Fatal(err)
	}
	const dims = 1536
	vec := func(seed int) []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(math.Sin(float64(seed*dims+i))) / 7
		}
		return v
	}
	for i := range 200 {
		if _, err := conn.Exec(ctx, `INSERT INTO vp (v) VALUES ($1)`, pgvector.NewVector(vec(i))); err != nil {
			b.Fatal(err)
		}
	}
	q := vec(-1)
	b.Run("insert/text", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := conn.Exec(ctx, `INSERT INTO vi (v) VALUES ($1::text::vector)`, vectorText(vec(i))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("insert/binary", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := conn.Exec(ctx, `INSERT INTO vi (v) VALUES ($1)`, pgvector.NewVector(vec(i))); err != nil {
				b.Fatal(err)
			}
		}
	})
	search := func(b *testing.B, sql string, arg any) {
		for b.Loop() {
			rows, err := conn.Query(ctx, sql, arg)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			if rows.Err() != nil || n != 10 {
				b.Fatalf("%d rows, %v", n, rows.Err())
			}
		}
	}
	b.Run("search200/text", func(b *testing.B) {
		search(b, `SELECT id FROM vp ORDER BY v <=> $1::text::vector LIMIT 10`, vectorText(q))
	})
	b.Run("search200/binary", func(b *testing.B) {
		search(b, `SELECT id FROM vp ORDER BY v <=> $1 LIMIT 10`, pgvector.NewVector(q))
	})
}

// TestVectorConnBinary: vectors go in binary on the pool's connections and
// in a caller's transaction, and as text in the simple protocol.
func TestVectorConnBinary(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.Schema(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	simpleCfg := pool.Config()
	simpleCfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	simple, err := pgxpool.NewWithConfig(ctx, simpleCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer simple.Close()
	for name, tc := range map[string]struct {
		q    Querier
		want bool
	}{"pool": {pool, true}, "tx": {tx, true}, "simple protocol": {simple, false}} {
		var got bool
		if err := vectorConn(ctx, tc.q, func(_ Querier, binary bool) error { got = binary; return nil }); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: binary %v, want %v", name, got, tc.want)
		}
	}
}
