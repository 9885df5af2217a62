package pgsaver_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// stmtCounter counts the statements a pool sends that insert writes or
// pending records (the chainer's, running meanwhile, are not counted):
// each Query or Exec, and each statement of a batch.
type stmtCounter struct{ n atomic.Int64 }

func (c *stmtCounter) count(sql string) {
	if strings.HasPrefix(sql, "INSERT INTO") || strings.HasPrefix(sql, "WITH") {
		if strings.Contains(sql, "checkpoint_writes") || strings.Contains(sql, "memvault_audit_pending") {
			c.n.Add(1)
		}
	}
}

func (c *stmtCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.count(d.SQL)
	return ctx
}
func (c *stmtCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *stmtCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (c *stmtCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.count(d.SQL)
}
func (c *stmtCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// auditedStatements checks that an audited put_writes, with the trail in
// the saver's schema (its record inserted with the writes), is one
// INSERT statement — the record a CTE of the writes' — and that its
// records chain and verify, on the pool dsn names (plain PostgreSQL or a
// Citus coordinator).
func auditedStatements(t *testing.T, dsn string) {
	ctx := audit.WithPrincipal(context.Background(), "writer")
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var stmts stmtCounter
	cfg.ConnConfig.Tracer = &stmts
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	inner, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tb, err := ownTrail(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	s := audit.NewSaver(inner, tr, nil)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	put, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := range n + 1 { // the first prepares the statement
		if i == 1 {
			if err := tr.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			stmts.n.Store(0)
		}
		if err := s.PutWrites(ctx, put, []checkpointer.Write{{Channel: "a", Value: i}}, fmt.Sprint("task-", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := stmts.n.Load(); got != n {
		t.Errorf("%d audited put_writes sent %d INSERT statements, want %d (the record a CTE of the writes' INSERT)", n, got, n)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := tr.Check(ctx, nil)
	if err != nil || rep.Records != n+2 || rep.Pending != 0 {
		t.Fatalf("Check = %+v, %v; want %d records (the put's, the put_writes'), none pending", rep, err, n+2)
	}
	tp, err := inner.GetTuple(ctx, put)
	if err != nil || tp == nil || len(tp.PendingWrites) != n+1 {
		t.Fatalf("GetTuple = %+v, %v; want the %d writes", tp, err, n+1)
	}
}

// TestAuditedPutWritesOneStatement: on PostgreSQL an audited put_writes
// is one statement (auditedStatements).
func TestAuditedPutWritesOneStatement(t *testing.T) { auditedStatements(t, pgtest.SchemaDSN(t)) }

// TestAuditedPutWritesOneStatementCitus: on a Citus coordinator, the
// writes distributed and the trail a local table, too.
func TestAuditedPutWritesOneStatementCitus(t *testing.T) {
	auditedStatements(t, pgtest.CitusSchemaDSN(t))
}
