package pgtest

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// StatementLog is a pgx tracer (pgx.QueryTracer and pgx.BatchTracer)
// that records the text of every statement its connections send, alone
// or in a batch: set it as a pool's ConnConfig.Tracer to see which
// statements an operation sent. It is safe for concurrent use.
type StatementLog struct {
	mu   sync.Mutex
	sent []string
}

// Take returns the statements sent since the last Take, in the order
// they were sent, and forgets them.
func (l *StatementLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := l.sent
	l.sent = nil
	return sent
}

func (l *StatementLog) add(sql string) {
	l.mu.Lock()
	l.sent = append(l.sent, sql)
	l.mu.Unlock()
}

// TraceQueryStart implements pgx.QueryTracer.
func (l *StatementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add(d.SQL)
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (*StatementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer.
func (*StatementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (l *StatementLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.add(d.SQL)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (*StatementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
