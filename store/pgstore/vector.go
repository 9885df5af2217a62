package pgstore

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// vectorText renders a vector in pgvector's text form, "[1,2.5,-3]", cast to
// vector or halfvec in SQL. Text works on any connection, without
// pgvector's types registered, and in every pgx exec mode: connections that
// cannot take binary use it.
func vectorText(v []float32) string {
	b := make([]byte, 0, 2+len(v)*10)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return string(append(b, ']'))
}

// vectorBatch is how a batch of vectors travels: as pgvector's binary
// values (param, SQL type "vector[]" or "halfvec[]") on a connection with
// pgvector-go's codecs registered, else as text ("text[]"), which any
// connection takes. Binary is 2.4× faster for a 1536-dimension insert
// (BenchmarkVectorParam): PostgreSQL does not parse the digits.
func (d *driver) vectorBatch(binary bool, vs [][]float32) (param any, arrayType string) {
	if binary {
		if d.index.vecType == "halfvec" {
			hv := make([]pgvector.HalfVector, len(vs))
			for i, v := range vs {
				hv[i] = pgvector.NewHalfVector(v)
			}
			return hv, "halfvec[]"
		}
		out := make([]pgvector.Vector, len(vs))
		for i, v := range vs {
			out[i] = pgvector.NewVector(v)
		}
		return out, "vector[]"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = vectorText(v)
	}
	return out, "text[]"
}

// vectorParam is a query vector as a statement parameter: pgvector-go's
// value, which a connection with its codecs registered (any connection the
// store has written vectors on) sends in binary, and any other sends as
// text through its driver.Valuer, so that it works everywhere.
func (d *driver) vectorParam(v []float32) any {
	if d.index.vecType == "halfvec" {
		return pgvector.NewHalfVector(v)
	}
	return pgvector.NewVector(v)
}

// vectorConn runs fn on one connection of q that has pgvector-go's codecs
// registered, registering them the first time memvault sends vectors on it
// (one query per connection). q is the store's pool or a caller's
// transaction; for anything else, or a database without the vector type,
// fn gets q and binary false (vectors then go as text).
func vectorConn(ctx context.Context, q Querier, fn func(q Querier, binary bool) error) error {
	switch x := q.(type) {
	case *pgxpool.Pool:
		c, err := x.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		return fn(c, registerVectorTypes(ctx, c.Conn()))
	case pgx.Tx:
		return fn(x, registerVectorTypes(ctx, x.Conn()))
	case *pgx.Conn:
		return fn(x, registerVectorTypes(ctx, x))
	}
	return fn(q, false)
}

// registerVectorTypes registers pgvector-go's codecs on c unless they are
// already there, and reports whether c can send vectors in binary. The
// simple protocol (PgBouncer's transaction pooling) sends no binary
// parameters, so it keeps text.
func registerVectorTypes(ctx context.Context, c *pgx.Conn) bool {
	if c.Config().DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return false
	}
	if _, ok := c.TypeMap().TypeForName("vector"); ok {
		return true
	}
	return pgxvec.RegisterTypes(ctx, c) == nil
}
