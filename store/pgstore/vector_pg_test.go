package pgstore

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// BenchmarkVectorParam sends vectors to PostgreSQL in pgvector's text form
// (cast in SQL) and in its binary form (pgvector-go's codec registered on
// the connection): inserts of 64, 256 and 1536 dimensions and a search
// query's parameter, on one connection. Binary won at every size (at 1536,
// 2.4× per insert), which is why puts send binary.
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
	for _, d := range []int{64, 256} {
		small := make([]float32, d)
		for i := range small {
			small[i] = float32(math.Sin(float64(i))) / 7
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE vs`+strconv.Itoa(d)+` (id bigserial PRIMARY KEY, v vector(`+strconv.Itoa(d)+`))`); err != nil {
			b.Fatal(err)
		}
		// As the store sends them: an array of vectors, unnested.
		b.Run("insert"+strconv.Itoa(d)+"/text", func(b *testing.B) {
			for b.Loop() {
				if _, err := conn.Exec(ctx, `INSERT INTO vs`+strconv.Itoa(d)+` (v) SELECT e::vector FROM unnest($1::text[]) AS e`, []string{vectorText(small)}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("insert"+strconv.Itoa(d)+"/binary", func(b *testing.B) {
			for b.Loop() {
				if _, err := conn.Exec(ctx, `INSERT INTO vs`+strconv.Itoa(d)+` (v) SELECT e FROM unnest($1::vector[]) AS e`, []pgvector.Vector{pgvector.NewVector(small)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
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
