package vault

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
)

// erasureMarker is what the data database's marks offer to record, per
// subject, the number of its latest erasure (sqliteaudit's and pgaudit's
// MarkErasure): the record every write of the subject checks (the erasure
// guard, keys.ErasureGuard), so that a process running on a copy of the
// key table taken before the erasure — which still holds the subject's
// keys, and whose own count of erasures is behind — cannot write the
// subject's values after it.
type erasureMarker interface {
	MarkErasure(ctx context.Context, subject string, n int64) error
}

// markErasure records that the n-th erasure of the key table erases
// subject, where the marks keep such records; on PostgreSQL it then waits
// for the writes of subject that checked the guard before.
func markErasure(ctx context.Context, marks erasureMarks, subject string, n int64) error {
	m, ok := marks.(erasureMarker)
	if !ok {
		return nil
	}
	if err := m.MarkErasure(ctx, subject, n); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}

// pgGuard is the erasure guard of a PostgreSQL data database: writes run
// its statement in their transaction (pgaudit's meta).
type pgGuard struct {
	marks interface {
		ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
	}
	sql string
}

func (g pgGuard) ErasedPast(ctx context.Context, subject string, known int64) (bool, error) {
	return g.marks.ErasedPast(ctx, subject, known)
}

func (g pgGuard) GuardSQL() string { return g.sql }

// goGuard is the erasure guard of a registered backend whose marks record
// erasures (MongoDB): writes call ErasedPast.
type goGuard struct {
	marks interface {
		ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
	}
}

func (g goGuard) ErasedPast(ctx context.Context, subject string, known int64) (bool, error) {
	return g.marks.ErasedPast(ctx, subject, known)
}

func (g goGuard) GuardSQL() string { return "" }

// setErasureGuard makes h's writes check the data database's record of
// erasures (keys.Hierarchy.SetErasureGuard): on SQLite and PostgreSQL in
// the write's critical section, on MongoDB before the write. Redis keeps
// no erasure marks: no guard.
func setErasureGuard(ctx context.Context, marks erasureMarks, h *Handle) error {
	var guard keys.ErasureGuard
	switch m := marks.(type) {
	case interface {
		ErasureGuardSQL(ctx context.Context) (string, error)
		ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
	}:
		sql, err := m.ErasureGuardSQL(ctx)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		guard = pgGuard{m, sql}
	case interface {
		ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
	}:
		// A backend without SQL (MongoDB): writes check it in Go.
		guard = goGuard{m}
	default:
		if h.Backend != config.BackendSQLite || h.dbPath == "" || h.dbPath == sqliteMemory {
			return nil
		}
		g, err := sqliteaudit.OpenErasureGuard(ctx, h.dbPath)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		h.closers = append(h.closers, g.Close)
		guard = g
	}
	if err := h.Keys.SetErasureGuard(ctx, guard); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	return nil
}
