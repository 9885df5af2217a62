package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/memvault/memvault/checkpointer"
)

// rawSQLite is the SQLite baseline: the saver's tables on the same file,
// through connections with the same pragmas (sqlitePools), with equivalent
// prepared SQL; values are encoded and decoded with encoding/json.
type rawSQLite struct {
	db                                      *sqlitePools
	latest, byID, rows, blobs, writes       *sql.Stmt
	putBlob, putCkpt, putWrite, writesOfIDs *sql.Stmt
}

func newRawSQLite(ctx context.Context, path string) (*rawSQLite, error) {
	db, err := openSQLitePools(ctx, path)
	if err != nil {
		return nil, err
	}
	r := &rawSQLite{db: db}
	var errs []error
	prep := func(pool *sql.DB, q string) *sql.Stmt {
		s, err := pool.PrepareContext(ctx, q)
		errs = append(errs, err)
		return s
	}
	const cols = `checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''`
	r.latest = prep(db.Reader(), `SELECT `+cols+` ORDER BY checkpoint_id DESC LIMIT 1`)
	r.byID = prep(db.Reader(), `SELECT `+cols+` AND checkpoint_id = ?`)
	r.rows = prep(db.Reader(), `SELECT `+cols+` ORDER BY checkpoint_id DESC LIMIT ?`)
	r.blobs = prep(db.Reader(), `SELECT blob FROM checkpoint_blobs WHERE thread_id = ? AND checkpoint_ns = ''
		AND (channel, version) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`)
	r.writes = prep(db.Reader(), `SELECT blob FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?
		ORDER BY task_id, idx`)
	r.writesOfIDs = prep(db.Reader(), `SELECT blob FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns = ''
		AND checkpoint_id IN (SELECT value FROM json_each(?)) ORDER BY checkpoint_id, task_id, idx`)
	r.putBlob = prep(db.Writer(), `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
		VALUES (?, '', ?, ?, 'json', ?) ON CONFLICT DO NOTHING`)
	r.putCkpt = prep(db.Writer(), `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
		VALUES (?, '', ?, ?, ?, ?) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = excluded.checkpoint, metadata = excluded.metadata`)
	r.putWrite = prep(db.Writer(), `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
		VALUES (?, '', ?, ?, '', ?, ?, 'json', ?) ON CONFLICT DO NOTHING`)
	if err := errors.Join(errs...); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *rawSQLite) close() {
	for _, s := range []*sql.Stmt{r.latest, r.byID, r.rows, r.blobs, r.writes, r.putBlob, r.putCkpt, r.putWrite, r.writesOfIDs} {
		if s != nil {
			s.Close()
		}
	}
	r.db.Close()
}

func (r *rawSQLite) putWithParent(ctx context.Context, thread, parent string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) error {
	type blob struct {
		ch, ver string
		b       []byte
	}
	blobs := make([]blob, 0, len(nv))
	for ch, v := range nv {
		b, err := json.Marshal(cp.ChannelValues[ch])
		if err != nil {
			return err
		}
		blobs = append(blobs, blob{ch, v, b})
	}
	doc, err := json.Marshal(map[string]any{"v": cp.V, "id": cp.ID, "ts": cp.TS, "channel_values": map[string]any{}, "channel_versions": cp.ChannelVersions, "versions_seen": cp.VersionsSeen, "updated_channels": cp.UpdatedChannels})
	if err != nil {
		return err
	}
	meta, err := json.Marshal(md)
	if err != nil {
		return err
	}
	var par any
	if parent != "" {
		par = parent
	}
	return r.db.Write(ctx, func(tx *sql.Tx) error {
		for _, b := range blobs {
			if _, err := tx.StmtContext(ctx, r.putBlob).ExecContext(ctx, thread, b.ch, b.ver, b.b); err != nil {
				return err
			}
		}
		_, err := tx.StmtContext(ctx, r.putCkpt).ExecContext(ctx, thread, cp.ID, par, doc, meta)
		return err
	})
}

func (r *rawSQLite) putWrites(ctx context.Context, cfg checkpointer.Config, ws []checkpointer.Write, task string) error {
	blobs := make([][]byte, len(ws))
	for i, w := range ws {
		b, err := json.Marshal(w.Value)
		if err != nil {
			return err
		}
		blobs[i] = b
	}
	return r.db.Write(ctx, func(tx *sql.Tx) error {
		for i, w := range ws {
			if _, err := tx.StmtContext(ctx, r.putWrite).ExecContext(ctx, cfg.ThreadID, cfg.CheckpointID, task, i, w.Channel, blobs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// rawRow is a checkpoint row with its values' and writes' bytes.
type rawRow struct {
	id     string
	parent sql.NullString
	doc    []byte
	meta   []byte
	vals   [][]byte
	writes [][]byte
}

// read runs stmt (latest, byID or rows) and fetches the rows' values (one
// lookup per distinct channel version) and writes, in one read
// transaction, as the saver does.
func (r *rawSQLite) read(ctx context.Context, thread string, stmt *sql.Stmt, args ...any) ([]*rawRow, error) {
	var out []*rawRow
	err := r.db.Read(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rs, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, append([]any{thread}, args...)...)
		if err != nil {
			return err
		}
		for rs.Next() {
			x := &rawRow{}
			if err := rs.Scan(&x.id, &x.parent, &x.doc, &x.meta); err != nil {
				rs.Close()
				return err
			}
			out = append(out, x)
		}
		rs.Close()
		if err := rs.Err(); err != nil || len(out) == 0 {
			return err
		}
		seen := map[[2]string]bool{}
		var pairs [][2]string
		ids := make([]string, 0, len(out))
		for _, x := range out {
			var d struct {
				Versions map[string]string `json:"channel_versions"`
			}
			if err := json.Unmarshal(x.doc, &d); err != nil {
				return err
			}
			for ch, v := range d.Versions {
				if k := [2]string{ch, v}; !seen[k] {
					seen[k] = true
					pairs = append(pairs, k)
				}
			}
			ids = append(ids, x.id)
		}
		pj, err := json.Marshal(pairs)
		if err != nil {
			return err
		}
		if out[0].vals, err = scanBlobs(tx.StmtContext(ctx, r.blobs).QueryContext(ctx, thread, pj)); err != nil {
			return err
		}
		if len(out) == 1 {
			out[0].writes, err = scanBlobs(tx.StmtContext(ctx, r.writes).QueryContext(ctx, thread, out[0].id))
			return err
		}
		ij, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		out[0].writes, err = scanBlobs(tx.StmtContext(ctx, r.writesOfIDs).QueryContext(ctx, thread, ij))
		return err
	})
	if err != nil {
		return nil, err
	}
	// An application needs the values, not the bytes: decode them.
	for _, x := range out {
		var d, m map[string]any
		if err := json.Unmarshal(x.doc, &d); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(x.meta, &m); err != nil {
			return nil, err
		}
		for _, b := range append(x.vals, x.writes...) {
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func scanBlobs(rs *sql.Rows, err error) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out [][]byte
	for rs.Next() {
		var b []byte
		if err := rs.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rs.Err()
}

func (r *rawSQLite) getTuple(ctx context.Context, thread, id string) error {
	var rows []*rawRow
	var err error
	if id == "" {
		rows, err = r.read(ctx, thread, r.latest)
	} else {
		rows, err = r.read(ctx, thread, r.byID, id)
	}
	if err == nil && len(rows) != 1 {
		err = fmt.Errorf("raw get: %d rows", len(rows))
	}
	return err
}

func (r *rawSQLite) list(ctx context.Context, thread string, limit int) error {
	rows, err := r.read(ctx, thread, r.rows, limit)
	if err == nil && len(rows) != limit {
		err = fmt.Errorf("raw list: %d rows", len(rows))
	}
	return err
}

func (r *rawSQLite) analyze(ctx context.Context) error {
	return r.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "ANALYZE")
		return err
	})
}

// seedTemplate reads the template thread's rows and inserts them again for
// n threads, a few hundred threads per write transaction.
func (r *rawSQLite) seedTemplate(ctx context.Context, t *template, n int) error {
	err := r.db.Read(ctx, func(tx *sql.Tx) error {
		rs, err := tx.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
			FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id`, t.thread)
		if err != nil {
			return err
		}
		for rs.Next() {
			var c tmplCkpt
			var parent, typ sql.NullString
			if err := rs.Scan(&c.ns, &c.id, &parent, &typ, &c.doc, &c.meta); err != nil {
				rs.Close()
				return err
			}
			if parent.Valid {
				c.parent = &parent.String
			}
			if typ.Valid {
				c.typ = &typ.String
			}
			t.ckpts = append(t.ckpts, c)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		rs, err = tx.QueryContext(ctx, `SELECT checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = ?`, t.thread)
		if err != nil {
			return err
		}
		for rs.Next() {
			var b tmplBlob
			if err := rs.Scan(&b.ns, &b.channel, &b.version, &b.typ, &b.blob); err != nil {
				rs.Close()
				return err
			}
			t.blobs = append(t.blobs, b)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		rs, err = tx.QueryContext(ctx, `SELECT checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = ?`, t.thread)
		if err != nil {
			return err
		}
		for rs.Next() {
			var w tmplWrite
			var typ sql.NullString
			if err := rs.Scan(&w.ns, &w.checkpoint, &w.task, &w.path, &w.idx, &w.channel, &typ, &w.blob); err != nil {
				rs.Close()
				return err
			}
			if typ.Valid {
				w.typ = &typ.String
			}
			t.writes = append(t.writes, w)
		}
		rs.Close()
		return rs.Err()
	})
	if err != nil {
		return err
	}
	if err := t.index(); err != nil {
		return err
	}
	const batch = 200 // threads per transaction
	for k0 := 0; k0 < n; k0 += batch {
		err := r.db.Write(ctx, func(tx *sql.Tx) error {
			insC, err := tx.PrepareContext(ctx, `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer insC.Close()
			insB, err := tx.PrepareContext(ctx, `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES (?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer insB.Close()
			insW, err := tx.PrepareContext(ctx, `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer insW.Close()
			for k := k0; k < min(n, k0+batch); k++ {
				for i := range t.ckpts {
					th, ns, id, parent, typ, doc, meta := t.ckptRow(k, i)
					if _, err := insC.ExecContext(ctx, th, ns, id, parent, typ, doc, meta); err != nil {
						return err
					}
				}
				for _, b := range t.blobs {
					if _, err := insB.ExecContext(ctx, scaleThread(k), b.ns, b.channel, b.version, b.typ, b.blob); err != nil {
						return err
					}
				}
				for _, w := range t.writes {
					if _, err := insW.ExecContext(ctx, scaleThread(k), w.ns, scaleID(w.checkpoint, k), w.task, w.path, w.idx, w.channel, w.typ, w.blob); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// benchClassicSQLite is the classic checkpointer bench (put, put_steady,
// put_writes, get_tuple, get_tuple_by_id, list10) on a temporary SQLite
// file: the library's savers and the audited column next to raw SQL on
// the same file.
func benchClassicSQLite(ctx context.Context, out io.Writer, asJSON bool, bf params) error {
	be, err := sqliteShapeBackend(ctx)
	if err != nil {
		return err
	}
	defer be.close()
	p := &benchPrinter{out: out, json: asJSON}
	if !asJSON {
		fmt.Fprintf(out, "checkpointer bench on %s: %s per row, concurrency 1 and %d\n", be.name, bf.duration, bf.concurrency)
	}
	if err := p.settings(be.settings); err != nil {
		return err
	}
	return benchClassicEnv(ctx, p, be, bf, nil)
}
