package sqlitesaver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/memvault/memvault/checkpointer"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// stmts are the saver's hot statements, prepared once per pool; a
// transaction reuses each connection's compiled copy (sql.Tx.StmtContext),
// so SQLite parses them once per connection instead of once per call.
type stmts struct {
	// Reader pool.
	latest, byID, blobs, writes, sends *sql.Stmt
	// Writer pool.
	putBlob, putCheckpoint, putChild, insertWrite, upsertWrite *sql.Stmt
	// The savepoint of each write of a group (driver.WriteGroup).
	savepoint, rollbackTo, release *sql.Stmt
	// records are audit records' INSERTs (checkpointer.RecordRow),
	// prepared before the write transaction that first needs one:
	// parsing one in every write was a tenth of an audited put_writes's
	// CPU.
	records sqlitedb.StmtCache
	// onWriter holds the reader pool's statements (latest … sends)
	// prepared on the writer pool: a read carrying its audit record runs
	// in a write transaction (driver.recorded).
	onWriter *stmts
}

// recordSQL is r's INSERT with SQLite's placeholders.
func recordSQL(r *checkpointer.RecordRow) string { return r.InsertSQL(func(int) string { return "?" }) }

// prepareRecord prepares r's INSERT, if any, on the writer pool w.
func (st *stmts) prepareRecord(ctx context.Context, w *sql.DB, r *checkpointer.RecordRow) {
	if r != nil {
		st.records.Prepare(ctx, w, recordSQL(r))
	}
}

const (
	sqlLatest = `SELECT ` + rowColumns + ` FROM checkpoints
		WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1`
	sqlByID = `SELECT ` + rowColumns + ` FROM checkpoints
		WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`
	// The (channel, version) pairs come as one JSON array of pairs; SQLite
	// looks each up in the primary key.
	sqlBlobs = `SELECT channel, version, type, blob FROM checkpoint_blobs
		WHERE thread_id = ? AND checkpoint_ns = ?
		AND (channel, version) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`
	sqlWrites = `SELECT checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes
		WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id IN (SELECT value FROM json_each(?))
		ORDER BY checkpoint_id, task_id, idx`
	sqlSends = `SELECT task_id, idx, channel, type, blob FROM checkpoint_writes
		WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND channel = ?
		ORDER BY task_path, task_id, idx`
	sqlPutBlob = `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`
	sqlPutCheckpoint = `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = excluded.checkpoint, metadata = excluded.metadata`
	// sqlPutChild is sqlPutCheckpoint for a checkpoint that inherits
	// values from its parent (?4): it inserts nothing, and reports no row
	// changed, when the parent is not stored. One statement, not a
	// look-up before the insert: a third fewer allocations per Put.
	sqlPutChild = `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6
		WHERE EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?4)
		ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = excluded.checkpoint, metadata = excluded.metadata`
	sqlWrite = `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) `
	sqlInsertWrite = sqlWrite + `DO NOTHING`
	sqlUpsertWrite = sqlWrite + `DO UPDATE SET channel = excluded.channel, type = excluded.type, blob = excluded.blob`
)

func prepare(ctx context.Context, db *sqlitedb.DB) (*stmts, error) {
	st := &stmts{}
	var errs []error
	p := func(pool *sql.DB, q string) *sql.Stmt {
		s, err := pool.PrepareContext(ctx, q)
		errs = append(errs, err)
		return s
	}
	r, w := db.Reader(), db.Writer()
	st.latest = p(r, sqlLatest)
	st.byID = p(r, sqlByID)
	st.blobs = p(r, sqlBlobs)
	st.writes = p(r, sqlWrites)
	st.sends = p(r, sqlSends)
	st.putBlob = p(w, sqlPutBlob)
	st.putCheckpoint = p(w, sqlPutCheckpoint)
	st.putChild = p(w, sqlPutChild)
	st.insertWrite = p(w, sqlInsertWrite)
	st.upsertWrite = p(w, sqlUpsertWrite)
	st.savepoint = p(w, `SAVEPOINT memvault_group`)
	st.rollbackTo = p(w, `ROLLBACK TO memvault_group`)
	st.release = p(w, `RELEASE memvault_group`)
	st.onWriter = &stmts{latest: p(w, sqlLatest), byID: p(w, sqlByID), blobs: p(w, sqlBlobs), writes: p(w, sqlWrites), sends: p(w, sqlSends)}
	if err := errors.Join(errs...); err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

func (st *stmts) close() {
	for _, s := range []*sql.Stmt{st.latest, st.byID, st.blobs, st.writes, st.sends,
		st.putBlob, st.putCheckpoint, st.putChild, st.insertWrite, st.upsertWrite, st.savepoint, st.rollbackTo, st.release} {
		if s != nil {
			s.Close()
		}
	}
	st.records.Close()
	if st.onWriter != nil {
		st.onWriter.close()
	}
}
