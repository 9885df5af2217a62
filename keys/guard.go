package keys

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/memvault/memvault/internal/idlimit"
)

// ErasureGuard is the data database's record of the erasures begun on it
// (vault's erasure intents): for each subject, the number of the latest
// erasure of it, counted as the key table counts erasures
// (Identified.Erasures). A write of a subject whose latest erasure is
// numbered past the count of the key table the writing process uses is
// one the process's key table does not know of — the process runs on a
// copy or a backup of the key table taken before the erasure, which still
// holds the subject's destroyed keys — and is refused with
// ErrSubjectErased: the key table's own check (LiveKey, the SQL fence)
// cannot see it, the copy answering for itself.
type ErasureGuard interface {
	// ErasedPast reports whether the data database records an erasure of
	// subject numbered above known.
	ErasedPast(ctx context.Context, subject string, known int64) (bool, error)
	// GuardSQL returns the statement a SQL write runs in its own
	// transaction instead, with the subject and known as its two
	// parameters: on PostgreSQL it fails with SQLSTATE FenceSQLState when
	// ErasedPast would report true, and holds off the erasure's deletion
	// of rows until the write ends; on SQLite, whose write lock does
	// that, it is a query of one boolean, ErasedPast's answer. "" when the
	// writes' database runs none (then they call ErasedPast before or
	// holding their write lock).
	GuardSQL() string
}

// ErasedSubjectMark names the data database's mark (its memvault_meta
// row, MongoDB's mark document) that holds the number of the latest
// erasure of subject: the record every backend's ErasureGuard reads. The
// PostgreSQL guard function (pgaudit's meta migration 01) and SQLite's
// guard query spell the same prefix in SQL.
func ErasedSubjectMark(subject string) string { return ErasedSubjectPrefix + subject }

// ErasedSubjectPrefix begins every ErasedSubjectMark.
const ErasedSubjectPrefix = "erased_subject:"

// guardState is a Hierarchy's ErasureGuard and the count of erasures its
// key table had started when last read.
type guardState struct {
	g     ErasureGuard
	sql   string
	known atomic.Int64
}

// SetErasureGuard makes every write of a subject check g (see
// ErasureGuard) besides the key table, against the key table's count of
// erasures, read now and again whenever a check refuses or the subject's
// keys are read from the table. It needs a key table that counts its
// erasures (Identified).
func (h *Hierarchy) SetErasureGuard(ctx context.Context, g ErasureGuard) error {
	if g == nil {
		h.guard.Store(nil)
		return nil
	}
	if _, ok := h.opts.Table.(Identified); !ok {
		return fmt.Errorf("keys: an erasure guard needs a key table that counts its erasures (keys.Identified), not %T", h.opts.Table)
	}
	s := &guardState{g: g, sql: g.GuardSQL()}
	if _, err := h.refreshErasures(ctx, s); err != nil {
		return err
	}
	h.guard.Store(s)
	return nil
}

// refreshErasures reads the key table's count of erasures into s (the
// count only grows: a read older than another is not let move it back).
func (h *Hierarchy) refreshErasures(ctx context.Context, s *guardState) (int64, error) {
	n, err := h.opts.Table.(Identified).Erasures(ctx)
	if err != nil {
		return 0, fmt.Errorf("keys: read the key table's erasure count: %w", err)
	}
	for {
		old := s.known.Load()
		if n <= old || s.known.CompareAndSwap(old, n) {
			return max(n, old), nil
		}
	}
}

// ErasureGuardSQL returns the statement of the erasure guard (see
// ErasureGuard.GuardSQL) and the key table's count of erasures to pass it;
// ok is false without a guard or when it runs no SQL.
func (h *Hierarchy) ErasureGuardSQL() (sql string, known int64, ok bool) {
	s := h.guard.Load()
	if s == nil || s.sql == "" {
		return "", 0, false
	}
	return s.sql, s.known.Load(), true
}

// CheckErasure fails, wrapping ErrSubjectErased, when the erasure guard
// records an erasure of subject the key table does not count (see
// ErasureGuard): it reads the table's count again before it refuses, so
// that another process's erasure on the same table, and a Readmit after
// it, refuse nothing. Without a guard it returns nil. Writers call it
// holding their write lock, as LiveKey.
func (h *Hierarchy) CheckErasure(ctx context.Context, subject string) error {
	s := h.guard.Load()
	if s == nil {
		return nil
	}
	known := s.known.Load()
	for fresh := false; ; fresh = true {
		past, err := s.g.ErasedPast(ctx, subject, known)
		if err != nil {
			return fmt.Errorf("keys: read the data database's erasures of %s: %w", idlimit.Name("subject", subject), err)
		}
		if !past {
			return nil
		}
		if fresh {
			h.cache.Remove(subject)
			return fmt.Errorf("keys: write of %s: the data database records an erasure of it that the key table, "+
				"which has started %d erasures, does not (a copy or a backup of the key table taken before it): %w", idlimit.Name("subject", subject), known, ErrSubjectErased)
		}
		if known, err = h.refreshErasures(ctx, s); err != nil {
			return err
		}
	}
}

// guardRefresh reads the key table's count of erasures again, when a
// guard with SQL is set: called as a subject's keys are read from the
// table, so that the count a SQL write passes is no older than the keys
// it seals with.
func (h *Hierarchy) guardRefresh(ctx context.Context) error {
	s := h.guard.Load()
	if s == nil || s.sql == "" {
		return nil
	}
	_, err := h.refreshErasures(ctx, s)
	return err
}

// ErasureGuard returns the guard SetErasureGuard set, nil when none.
func (h *Hierarchy) ErasureGuard() ErasureGuard {
	if s := h.guard.Load(); s != nil {
		return s.g
	}
	return nil
}
