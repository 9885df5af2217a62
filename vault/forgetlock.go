package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault/vaulthook"
)

// The tests of backend modules pause a Forget after its claim
// (Handle.afterClaim) through vaulthook, as vault's own tests do directly.
func init() {
	vaulthook.AfterClaim = func(h any, f func(int64)) { h.(*Handle).afterClaim = f }
}

// forgetLock is held by a Forget from before it claims its erasure intent
// until the intent is marked done, in a way that dies with the process: a
// PostgreSQL session advisory lock, a file lock beside a SQLite database,
// a registered backend's (BackendConn.ErasureLock: MongoDB's lease).
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
var errLockLost = errors.New("vault: the erasure lock was lost while the forget ran (its database session ended, its lock file was removed, or its lease expired and was taken); nothing after its last step was done: run forget again")

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

// forgetLock returns the database's lock, nil where there is none (an
// in-memory database, SQLite without flock(2), a registered backend
// without BackendConn.ErasureLock): there Open finishes every intent not
// done, a live Forget's included, and a Forget finishes none but its own.
func (h *Handle) forgetLock() forgetLock {
	key := "memvault_erasure_intents/" + h.keyTableID
	switch {
	case h.Pool != nil:
		return pgForgetLock{cfg: h.Pool.Config().ConnConfig, key: key}
	case haveFlock && h.Backend == config.BackendSQLite && h.dbPath != "" && h.dbPath != sqliteMemory:
		return fileForgetLock{path: lockPath(h.dbPath)}
	case h.external != nil && h.external.ErasureLock != nil:
		return externalForgetLock{l: h.external.ErasureLock, key: key}
	}
	return nil
}

// DefaultForgetLockWait is how long a Forget waits for the erasure lock
// while another Forget of the database holds it, when
// ForgetOptions.LockWait is 0. A Forget holds it only from before its
// claim to its intent's done mark (a few writes and the key table's
// transaction), so a wait this long means that Forget is stuck (its key
// table's transaction waiting for a lock of its own) or was killed where
// the lock outlives its holder for a while (MongoDB's lease).
const DefaultForgetLockWait = 2 * time.Minute

// ErrErasureLocked is wrapped by the error of a Forget that gave up
// waiting for the erasure lock (ForgetOptions.LockWait) while another
// Forget of the same database held it. It claimed nothing and changed
// nothing: run it again once the other Forget ends.
var ErrErasureLocked = errors.New("vault: another forget holds the erasure lock of this database")

// takeForgetLock waits for l up to wait (ForgetOptions.LockWait: 0 is
// DefaultForgetLockWait, negative is not at all); a deadline of ctx that
// comes first ends the wait with ctx's error.
func takeForgetLock(ctx context.Context, l forgetLock, wait time.Duration) (*heldLock, error) {
	if wait < 0 {
		held, ok, err := l.tryLock(ctx)
		if err == nil && !ok {
			err = lockBusy("it did not wait (ForgetOptions.LockWait negative)")
		}
		return held, err
	}
	if wait == 0 {
		wait = DefaultForgetLockWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	held, err := l.lock(lctx)
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		return nil, lockBusy(fmt.Sprintf("it waited %s", wait))
	}
	return held, err
}

// lockBusy is ErrErasureLocked, saying what was waited and what to do.
func lockBusy(waited string) error {
	return fmt.Errorf("%w (%s); this forget claimed and changed nothing: run it again once the other forget ends "+
		"(one killed frees the lock when its process dies; on MongoDB when its lease expires), or wait longer "+
		"(ForgetOptions.LockWait, memvault forget --lock-wait)", ErrErasureLocked, waited)
}

// externalForgetLock is a registered backend's lock (BackendConn.ErasureLock).
type externalForgetLock struct {
	l   ErasureLock
	key string
}

func (e externalForgetLock) tryLock(ctx context.Context) (*heldLock, bool, error) {
	held, ok, err := e.l.TryLock(ctx, e.key)
	if err != nil {
		return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
	}
	if !ok || held == nil {
		return nil, false, nil
	}
	return &heldLock{release: held.Release, check: held.Check}, true, nil
}

// lock tries the lock until it is free, a little less often the longer it
// waits: a backend's lock (a lease document) has no way to wait on the
// server.
func (e externalForgetLock) lock(ctx context.Context) (*heldLock, error) {
	pause := 5 * time.Millisecond
	for {
		held, ok, err := e.tryLock(ctx)
		if err != nil || ok {
			return held, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("vault: the erasure lock: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
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
