package vault

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

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
	// lock waits for the lock; unlock releases it.
	lock(ctx context.Context) (unlock func(), err error)
	// tryLock takes the lock when it is free: ok is false while another
	// Forget holds it.
	tryLock(ctx context.Context) (unlock func(), ok bool, err error)
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
		return fileForgetLock{path: h.dbPath + forgetLockSuffix}
	}
	return nil
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

func (l pgForgetLock) take(ctx context.Context, sql string) (func(), bool, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg.Copy())
	if err != nil {
		return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
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
	// Closing the session releases its advisory locks.
	return func() { once.Do(func() { _ = conn.Close(context.Background()) }) }, true, nil
}

func (l pgForgetLock) lock(ctx context.Context) (func(), error) {
	unlock, _, err := l.take(ctx, `SELECT true FROM pg_advisory_lock(hashtextextended($1, 0))`)
	return unlock, err
}

func (l pgForgetLock) tryLock(ctx context.Context) (func(), bool, error) {
	return l.take(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`)
}
