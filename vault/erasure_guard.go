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

// erasedPaster is what marks that record erasures answer writes with
// (pgaudit's and mongovault's ErasedPast).
type erasedPaster interface {
	ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
}

// marksGuard is the erasure guard the data database's marks give: writes
// run sql in their transaction (PostgreSQL's guard function), or call
// ErasedPast where sql is "" (MongoDB).
type marksGuard struct {
	erasedPaster
	sql string
}

func (g marksGuard) GuardSQL() string { return g.sql }

// setErasureGuard makes h's writes check the data database's record of
// erasures (keys.Hierarchy.SetErasureGuard): on SQLite and PostgreSQL in
// the write's critical section, on MongoDB before the write. Redis keeps
// no erasure marks: no guard.
func setErasureGuard(ctx context.Context, marks erasureMarks, h *Handle) error {
	var guard keys.ErasureGuard
	switch m := marks.(type) {
	case interface {
		erasedPaster
		ErasureGuardSQL(ctx context.Context) (string, error)
	}:
		sql, err := m.ErasureGuardSQL(ctx)
		if err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		guard = marksGuard{m, sql}
	case erasedPaster:
		// A backend without SQL (MongoDB): writes check it in Go.
		guard = marksGuard{m, ""}
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
