package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/memvault/memvault/checkpointer/internal/checks"
	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
)

// chunk bounds the number of keys in one IN list, well under SQLite's
// limit on bound parameters.
const chunk = 400

// pageSize is how many checkpoint rows List reads per read transaction.
const pageSize = 64

// row is a checkpoint row and everything needed to build its tuple, read
// in one read transaction and decoded (decrypted) after it ends.
type row struct {
	thread, ns, id, parent string
	doc, meta              []byte
	md                     map[string]any
	dec                    *core.DecodedCheckpoint
	values                 []core.Value
	writes                 []core.StoredWrite
	sends                  []core.StoredWrite // the parent's ChannelTasks writes (v<4)
}

const rowColumns = `thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata`

func scanRows(rs *sql.Rows) ([]*row, error) {
	defer rs.Close()
	var out []*row
	for rs.Next() {
		r := &row{}
		var parent sql.NullString
		if err := rs.Scan(&r.thread, &r.ns, &r.id, &parent, &r.doc, &r.meta); err != nil {
			return nil, err
		}
		r.parent = parent.String
		out = append(out, r)
	}
	return out, rs.Err()
}

// decodeMeta parses the row's metadata document.
func (r *row) decodeMeta() error {
	m, err := core.DecodeMetadata(r.meta)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", r.id, err)
	}
	r.md = m
	return nil
}

type nsKey struct{ thread, ns string }

// fill reads the values, pending writes and (for v<4 checkpoints) pending
// sends of rows, whose metadata is decoded already.
func fill(ctx context.Context, tx *sql.Tx, st *stmts, rows []*row) error {
	groups := map[nsKey][]*row{}
	var order []nsKey
	for _, r := range rows {
		dec, err := core.DecodeCheckpointJSON(r.doc)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", r.id, err)
		}
		r.dec = dec
		k := nsKey{r.thread, r.ns}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		if err := fillGroup(ctx, tx, st, k, groups[k]); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.dec.Checkpoint.V >= 4 || r.parent == "" {
			continue
		}
		rs, err := tx.StmtContext(ctx, st.sends).QueryContext(ctx, r.thread, r.ns, r.parent, checkpointer.ChannelTasks)
		if err != nil {
			return err
		}
		r.sends, err = scanWrites(rs, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

type chanVersion struct{ channel, version string }

// fillGroup loads the values and writes of rows of one thread and namespace.
func fillGroup(ctx context.Context, tx *sql.Tx, st *stmts, k nsKey, rows []*row) error {
	// Values: one lookup per distinct (channel, version); unchanged channels
	// are shared by consecutive checkpoints.
	need := map[chanVersion]struct{}{}
	var pairs [][2]string
	for _, r := range rows {
		for ch, ver := range r.dec.Checkpoint.ChannelVersions {
			cv := chanVersion{ch, ver}
			if _, ok := need[cv]; !ok {
				need[cv] = struct{}{}
				pairs = append(pairs, [2]string{ch, ver})
			}
		}
	}
	if len(pairs) > 0 {
		keys, err := json.Marshal(pairs)
		if err != nil {
			return err
		}
		rs, err := tx.StmtContext(ctx, st.blobs).QueryContext(ctx, k.thread, k.ns, keys)
		if err != nil {
			return err
		}
		found := make(map[chanVersion]core.Value, len(pairs))
		for rs.Next() {
			var b core.Value
			if err := rs.Scan(&b.Channel, &b.Version, &b.Type, &b.Data); err != nil {
				rs.Close()
				return err
			}
			found[chanVersion{b.Channel, b.Version}] = b
		}
		if err := rs.Close(); err != nil {
			return err
		}
		if err := rs.Err(); err != nil {
			return err
		}
		for _, r := range rows {
			for ch, ver := range r.dec.Checkpoint.ChannelVersions {
				if b, ok := found[chanVersion{ch, ver}]; ok && b.Type != serde.TypeEmpty {
					r.values = append(r.values, b)
				}
			}
		}
	}

	// Pending writes, ordered (task_id, idx) per checkpoint.
	byID := make(map[string]*row, len(rows))
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if _, ok := byID[r.id]; !ok {
			ids = append(ids, r.id)
		}
		byID[r.id] = r
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rs, err := tx.StmtContext(ctx, st.writes).QueryContext(ctx, k.thread, k.ns, idList)
	if err != nil {
		return err
	}
	_, err = scanWrites(rs, byID)
	return err
}

// scanWrites reads write rows. With byID, rows start with checkpoint_id and
// are appended to their row's writes; otherwise they are returned.
func scanWrites(rs *sql.Rows, byID map[string]*row) ([]core.StoredWrite, error) {
	defer rs.Close()
	var out []core.StoredWrite
	for rs.Next() {
		var (
			w   core.StoredWrite
			id  string
			typ sql.NullString
			err error
		)
		if byID != nil {
			err = rs.Scan(&id, &w.Task, &w.Idx, &w.Channel, &typ, &w.Data)
		} else {
			err = rs.Scan(&w.Task, &w.Idx, &w.Channel, &typ, &w.Data)
		}
		if err != nil {
			return nil, err
		}
		w.Type = typ.String
		if byID != nil {
			if r := byID[id]; r != nil {
				r.writes = append(r.writes, w)
			}
			continue
		}
		out = append(out, w)
	}
	return out, rs.Err()
}

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// tuple decodes (and decrypts) a filled row.
func (s *Saver) tuple(ctx context.Context, r *row) (*checkpointer.Tuple, error) {
	t, err := s.reader.Tuple(ctx, &core.Stored{
		Thread: r.thread, NS: r.ns, ID: r.id, Parent: r.parent,
		Checkpoint: r.dec, Metadata: r.md,
		Values: r.values, Writes: r.writes, Sends: r.sends,
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return t, nil
}

// GetTuple implements checkpointer.Saver.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if err := checks.ValidateConfig(cfg); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	var r *row
	err := s.db.Read(ctx, func(tx *sql.Tx) error {
		var (
			rs  *sql.Rows
			err error
		)
		if cfg.CheckpointID != "" {
			rs, err = tx.StmtContext(ctx, s.st.byID).QueryContext(ctx, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
		} else {
			rs, err = tx.StmtContext(ctx, s.st.latest).QueryContext(ctx, cfg.ThreadID, cfg.CheckpointNS)
		}
		if err != nil {
			return err
		}
		rows, err := scanRows(rs)
		if err != nil || len(rows) == 0 {
			return err
		}
		r = rows[0]
		if err := r.decodeMeta(); err != nil {
			return err
		}
		return fill(ctx, tx, s.st, rows)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: get tuple: %w", err)
	}
	if r == nil {
		return nil, nil
	}
	return s.tuple(ctx, r)
}

// List implements checkpointer.Saver. Rows are read in pages of 64 per read
// transaction and decoded as the consumer reaches them; no database
// connection is held while the consumer runs, so it may call the saver. A
// checkpoint put while the listing runs may or may not be seen. Scalar
// entries of opt.Filter are evaluated in SQL; the whole filter is then
// applied with core.MetadataContains, and opt.Limit counts only
// tuples that pass it.
func (s *Saver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	return func(yield func(*checkpointer.Tuple, error) bool) {
		if err := checks.ValidateListConfig(cfg, opt); err != nil {
			yield(nil, fmt.Errorf("sqlite: list: %w", err))
			return
		}
		where, args, exact := listWhere(cfg, opt)

		var last *row
		yielded := 0
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("sqlite: list: %w", err))
				return
			}
			n := pageSize
			if exact && opt.Limit > 0 {
				n = min(n, opt.Limit-yielded)
			}
			q := listSQL(where, last != nil)
			qargs := args
			if last != nil {
				qargs = append(qargs[:len(qargs):len(qargs)], last.id, last.id, last.id, last.thread, last.thread, last.ns)
			}
			qargs = append(qargs[:len(qargs):len(qargs)], n)

			var page, keep []*row
			err := s.db.Read(ctx, func(tx *sql.Tx) error {
				rs, err := tx.QueryContext(ctx, q, qargs...)
				if err != nil {
					return err
				}
				if page, err = scanRows(rs); err != nil {
					return err
				}
				for _, r := range page {
					if err := r.decodeMeta(); err != nil {
						return err
					}
					if len(opt.Filter) == 0 || core.MetadataContains(r.md, opt.Filter) {
						keep = append(keep, r)
					}
				}
				return fill(ctx, tx, s.st, keep)
			})
			if err != nil {
				yield(nil, fmt.Errorf("sqlite: list: %w", err))
				return
			}
			for _, r := range keep {
				t, err := s.tuple(ctx, r)
				if !yield(t, err) || err != nil {
					return
				}
				yielded++
				if opt.Limit > 0 && yielded >= opt.Limit {
					return
				}
			}
			if len(page) < n {
				return
			}
			last = page[len(page)-1]
		}
	}
}

// listWhere returns List's conditions and their arguments; exact is false
// when some entry of opt.Filter is left to core.MetadataContains.
func listWhere(cfg *checkpointer.Config, opt checkpointer.ListOptions) (where []string, args []any, exact bool) {
	if cfg != nil {
		if cfg.ThreadID != "" {
			where = append(where, "thread_id = ?")
			args = append(args, cfg.ThreadID)
		}
		if !opt.AllNamespaces {
			where = append(where, "checkpoint_ns = ?")
			args = append(args, cfg.CheckpointNS)
		}
		if cfg.CheckpointID != "" {
			where = append(where, "checkpoint_id = ?")
			args = append(args, cfg.CheckpointID)
		}
	}
	if opt.Before != nil && opt.Before.CheckpointID != "" {
		where = append(where, "checkpoint_id < ?")
		args = append(args, opt.Before.CheckpointID)
	}
	exact = true
	for k, v := range opt.Filter {
		cond, cargs, ok := pushdown(k, v)
		if !ok {
			exact = false
			continue
		}
		where = append(where, cond)
		args = append(args, cargs...)
	}
	return where, args, exact
}

// listSQL is List's statement for the conditions where; paged continues
// after the last row of the previous page (its id, thread and namespace
// come after the conditions' arguments), then the page size.
func listSQL(where []string, paged bool) string {
	q := `SELECT ` + rowColumns + ` FROM checkpoints WHERE 1`
	for _, w := range where {
		q += " AND " + w
	}
	if paged {
		q += ` AND checkpoint_id <= ? AND (checkpoint_id < ? OR (checkpoint_id = ? AND (thread_id > ? OR (thread_id = ? AND checkpoint_ns > ?))))`
	}
	return q + ` ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns LIMIT ?`
}

// pushdown returns an SQL condition selecting rows whose metadata has key k
// equal to the scalar v, or false when v is not a scalar SQL can compare
// exactly (objects and arrays are left to MetadataContains).
func pushdown(k string, v any) (string, []any, bool) {
	if strings.ContainsAny(k, "\"\\") {
		return "", nil, false
	}
	path := `$."` + k + `"`
	const num = `json_type(metadata, ?) IN ('integer', 'real') AND json_extract(metadata, ?) = ?`
	switch x := v.(type) {
	case nil:
		return `json_type(metadata, ?) = 'null'`, []any{path}, true
	case bool:
		t := "false"
		if x {
			t = "true"
		}
		return `json_type(metadata, ?) = ?`, []any{path, t}, true
	case string:
		return `json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?`, []any{path, path, x}, true
	case int:
		return num, []any{path, path, int64(x)}, true
	case int32:
		return num, []any{path, path, int64(x)}, true
	case int64:
		return num, []any{path, path, x}, true
	}
	return "", nil, false
}
