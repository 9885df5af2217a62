package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/config"
)

// forgetLock is held by a Forget from before it claims its erasure intent
// until the intent is marked done, in a way that dies with the process: a
// PostgreSQL session advisory lock, a file lock beside a SQLite database.
// Open tries it before it finishes intents that are not done: while it is
// held, an intent may be a live Forget's, which Open must leave to it
// (finishing it too recorded a second subject.erase and warned that a
// Forget had not finished); once its holder is killed, the next Open takes
// it and finishes the intent. Forgets of one database take it in turn,
// for the few writes from the claim to the done mark.
type forgetLock interface {
	// lock waits for the lock.
	lock(ctx context.Context) (*heldLock, error)
	// tryLock takes the lock when it is free: ok is false while another
	// Forget holds it.
	tryLock(ctx context.Context) (held *heldLock, ok bool, err error)
}

// heldLock is a forgetLock taken.
type heldLock struct {
	// release gives the lock up (once; later calls do nothing).
	release func()
	// check fails when the lock was lost meanwhile — its PostgreSQL
	// session ended (terminated, timed out, a failover), its lock file
	// removed or replaced — so that a Forget that lost it stops before
	// its next step instead of running beside an Open that took the lock
	// and finishes its intent (TestReviewS25bForgetLosesItsLock).
	check func(ctx context.Context) error
}

// errLockLost is the error of a Forget whose erasure lock was lost.
var errLockLost = errors.New("vault: the erasure lock was lost while the forget ran (its database session ended, or its lock file was removed); nothing after its last step was done: run forget again")

// still fails when h, a lock this process holds (nil: none), was lost.
func (h *heldLock) still(ctx context.Context) error {
	if h == nil {
		return nil
	}
	if err := h.check(ctx); err != nil {
		return fmt.Errorf("%w (%w)", errLockLost, err)
	}
	return nil
}

// forgetLock returns the database's lock, nil where there is none (MongoDB,
// an in-memory database, SQLite without flock(2)): there Open finishes
// every intent not done, a live Forget's included, and a Forget finishes
// none but its own.
func (h *Handle) forgetLock() forgetLock {
	switch {
	case h.Pool != nil:
		return pgForgetLock{cfg: h.Pool.Config().ConnConfig, key: "memvault_erasure_intents/" + h.keyTableID}
	case haveFlock && h.Backend == config.BackendSQLite && h.dbPath != "" && h.dbPath != sqliteMemory:
		return fileForgetLock{path: lockPath(h.dbPath)}
	}
	return nil
}

// lockPath is the lock file of the SQLite database at db: beside the file
// the path names after its symbolic links, so that processes naming one
// database by two paths (a link such as current.db → releases/agent.db)
// lock one file (TestReviewS25bSymlinkedDatabaseTwoLocks).
func lockPath(db string) string {
	if real, err := filepath.EvalSymlinks(db); err == nil {
		db = real
	}
	return db + forgetLockSuffix
}

// forgetLockSuffix names the lock file beside a SQLite database. It is
// never deleted: removing a locked file lets two processes lock two files.
const forgetLockSuffix = ".forget-lock"

// pgForgetLock is a session advisory lock of the data database, on a
// connection of its own (not the pool's: a pool of one connection would
// leave the Forget none for its writes).
type pgForgetLock struct {
	cfg *pgx.ConnConfig
	key string // per key table: intents are numbered per key table
}

func (l pgForgetLock) take(ctx context.Context, sql string) (*heldLock, bool, error) {
	cfg := l.cfg.Copy()
	// The lock lives as long as this idle session: a server or role
	// setting that ends idle sessions would end it under the Forget
	// (TestReviewS25bIdleSessionTimeoutDropsLock). Off for this session,
	// where the server knows the settings (idle_session_timeout is
	// PostgreSQL 14's).
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
	}
	for _, set := range []string{`SET idle_in_transaction_session_timeout = 0`, `SET idle_session_timeout = 0`} {
		if _, err := conn.Exec(ctx, set); err != nil && !unknownSetting(err) {
			_ = conn.Close(context.Background())
			return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
		}
	}
	var ok bool
	if err := conn.QueryRow(ctx, sql, l.key).Scan(&ok); err != nil || !ok {
		_ = conn.Close(context.Background())
		if err != nil {
			return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
		}
		return nil, false, nil
	}
	var once sync.Once
	return &heldLock{
		// Closing the session releases its advisory locks.
		release: func() { once.Do(func() { _ = conn.Close(context.Background()) }) },
		// A session lock is held as long as its session lives: a round
		// trip on it tells.
		check: func(ctx context.Context) error {
			_, err := conn.Exec(ctx, `SELECT 1`)
			return err
		},
	}, true, nil
}

// unknownSetting reports whether err is PostgreSQL's answer to a SET of a
// parameter the server does not have (an older server).
func unknownSetting(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42704"
}

func (l pgForgetLock) lock(ctx context.Context) (*heldLock, error) {
	held, _, err := l.take(ctx, `SELECT true FROM pg_advisory_lock(hashtextextended($1, 0))`)
	return held, err
}

func (l pgForgetLock) tryLock(ctx context.Context) (*heldLock, bool, error) {
	return l.take(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`)
}
