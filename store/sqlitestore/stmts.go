package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// readStmts are the statements reads use, prepared on one pool; a
// transaction reuses each connection's compiled copy (sql.Tx.StmtContext).
type readStmts struct {
	get, gen *sql.Stmt
	// codes reads codesBatch items' code rows with their fine parts
	// (tx.Codes): prepared once, where building the statement for each
	// batch of a search was a sixth of the time it spent reading codes.
	codes *sql.Stmt
	// fines reads codesBatch items' fine parts alone (tx.Fines).
	fines *sql.Stmt
}

// stmts are the store's hot statements. Reads run in read transactions
// (reader pool) or, in a batch with writes, in the write transaction
// (writer pool), so the read statements exist on both.
type stmts struct {
	r, w                                                     *readStmts
	bump, delVec, delItem, replace, insVec, putCode, refresh *sql.Stmt
	// the code index's (codes.go)
	quant, delCodes, insCode, reembedCode, putFine, insLog, trimLog, setQuant *sql.Stmt
	all                                                                       []*sql.Stmt
}

const (
	sqlGet = `SELECT ` + itemColumns + ` FROM store WHERE prefix = ? AND key = ?`
	sqlGen = `SELECT g.gen, q.codes_gen, q.log_floor, q.code_items, q.code_sum,
		q.snapshot_gen >= 0 AND NOT EXISTS (SELECT 1 FROM store_vector_snapshot), q.snapshot_gen < 0
		FROM store_generation g, store_vector_quant q WHERE g.id = 0 AND q.id = 0`
	sqlBump    = `UPDATE store_generation SET gen = gen + 1 WHERE id = 0 RETURNING gen`
	sqlDelVec  = `DELETE FROM store_vectors WHERE prefix = ? AND key = ?`
	sqlDelItem = `DELETE FROM store WHERE prefix = ? AND key = ?`
	// sqlReplace is the engine's replace rule (DriverCaps.UpsertVersions):
	// created_at stays, updated_at moves past the replaced row's.
	sqlReplace = `INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
			updated_at = max(excluded.updated_at, store.updated_at + 1),
			expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes`
	// sqlInsVec and sqlPutCode write a vector and its code of the item
	// sqlReplace wrote, with the item's updated_at as stored (which the
	// replace rule may have moved past the engine's): taken in SQL, so
	// that the replace is an exec, not a query returning it.
	sqlInsVec = `INSERT INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at)
		SELECT ?1, ?2, ?3, ?4, s.updated_at, s.updated_at FROM store s WHERE s.prefix = ?1 AND s.key = ?2
		ON CONFLICT (prefix, key, field_name) DO UPDATE SET
		embedding = excluded.embedding, updated_at = excluded.updated_at`
	sqlPutCode = `INSERT OR REPLACE INTO store_vector_codes (prefix, key, field_name, updated_at, code)
		SELECT ?1, ?2, ?3, s.updated_at, ?4 FROM store s WHERE s.prefix = ?1 AND s.key = ?2`
	sqlRefresh = `UPDATE store SET expires_at = ? WHERE prefix = ? AND key = ? AND ttl_minutes > 0`

	sqlQuant    = `SELECT g.gen, q.codes_gen, q.centre, q.snapshot_gen, q.code_items, q.code_sum FROM store_generation g, store_vector_quant q WHERE g.id = 0 AND q.id = 0`
	sqlDelCodes = `DELETE FROM store_vector_codes WHERE prefix = ? AND key = ?`
	sqlInsCode  = `INSERT OR REPLACE INTO store_vector_codes (prefix, key, field_name, updated_at, code) VALUES (?, ?, ?, ?, ?)`
	// sqlReembedCode writes the code of a vector re-embedded in place,
	// with the vector's updated_at.
	sqlReembedCode = `INSERT OR REPLACE INTO store_vector_codes (prefix, key, field_name, updated_at, code)
		SELECT prefix, key, field_name, updated_at, ?4 FROM store_vectors WHERE prefix = ?1 AND key = ?2 AND field_name = ?3`
	// sqlPutFine writes the fine part of a code row written before it
	// in the transaction (see putCode): none for a row that is not there,
	// so that no fine part outlives its code.
	sqlPutFine = `INSERT OR REPLACE INTO store_vector_fine (prefix, key, field_name, fine)
		SELECT prefix, key, field_name, ?4 FROM store_vector_codes WHERE prefix = ?1 AND key = ?2 AND field_name = ?3`
	sqlInsLog   = `INSERT INTO store_vector_log (gen, prefix, key) VALUES (?, ?, ?)`
	sqlTrimLog  = `DELETE FROM store_vector_log WHERE gen <= (SELECT log_floor FROM store_vector_quant WHERE id = 0)`
	sqlSetQuant = `UPDATE store_vector_quant SET codes_gen = CASE WHEN codes_gen = ? THEN ? ELSE codes_gen END,
		log_floor = max(log_floor, min(?, max(snapshot_gen, ?))), code_items = ?, code_sum = ? WHERE id = 0`
)

func prepare(ctx context.Context, db *sqlitedb.DB) (*stmts, error) {
	st := &stmts{}
	var errs []error
	p := func(pool *sql.DB, q string) *sql.Stmt {
		s, err := pool.PrepareContext(ctx, q)
		errs = append(errs, err)
		if s != nil {
			st.all = append(st.all, s)
		}
		return s
	}
	reads := func(pool *sql.DB) *readStmts {
		return &readStmts{get: p(pool, sqlGet), gen: p(pool, sqlGen), codes: p(pool, sqlCodes), fines: p(pool, sqlFines)}
	}
	r, w := db.Reader(), db.Writer()
	st.w = reads(w)
	st.r = st.w
	if r != w {
		st.r = reads(r)
	}
	st.bump = p(w, sqlBump)
	st.delVec = p(w, sqlDelVec)
	st.delItem = p(w, sqlDelItem)
	st.replace = p(w, sqlReplace)
	st.insVec = p(w, sqlInsVec)
	st.putCode = p(w, sqlPutCode)
	st.refresh = p(w, sqlRefresh)
	st.quant = p(w, sqlQuant)
	st.delCodes = p(w, sqlDelCodes)
	st.insCode = p(w, sqlInsCode)
	st.reembedCode = p(w, sqlReembedCode)
	st.putFine = p(w, sqlPutFine)
	st.insLog = p(w, sqlInsLog)
	st.trimLog = p(w, sqlTrimLog)
	st.setQuant = p(w, sqlSetQuant)
	if err := errors.Join(errs...); err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

func (st *stmts) close() {
	for _, s := range st.all {
		s.Close()
	}
}
