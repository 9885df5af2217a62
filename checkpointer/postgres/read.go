package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/memvault/memvault/checkpointer/internal/checks"
	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memvault/memvault/checkpointer"
)

// GetTuple implements checkpointer.Saver with one statement: the checkpoint
// row, its channel values (the blob rows at each channel's current version)
// and its pending writes.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if err := checks.ValidateConfig(cfg); err != nil {
		return nil, fmt.Errorf("postgres: get tuple: %w", err)
	}
	var rows pgx.Rows
	var err error
	if cfg.CheckpointID != "" {
		rows, err = s.db.Query(ctx, s.q.getByID, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	} else {
		rows, err = s.db.Query(ctx, s.q.getLatest, cfg.ThreadID, cfg.CheckpointNS)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get tuple: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("postgres: get tuple: %w", err)
		}
		return nil, nil
	}
	var r rawTuple
	if err := r.scan(rows); err != nil {
		return nil, fmt.Errorf("postgres: get tuple: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: get tuple: %w", err)
	}
	t, err := s.decode(ctx, &r)
	if err != nil {
		return nil, fmt.Errorf("postgres: get tuple: %w", err)
	}
	return t, nil
}

// List implements checkpointer.Saver with one statement whose rows are
// decoded as they arrive: memory stays bounded by one row whatever the
// number of checkpoints, and breaking out of the loop closes the query.
//
// cfg nil lists every thread, and so does a cfg without a thread id when
// opt.AllThreads is set (checkpointer.ErrMissingThreadID otherwise). The namespace is
// filtered on unless opt.AllNamespaces; cfg.CheckpointID, when set, selects
// that checkpoint only. opt.Filter is applied as metadata @> filter.
func (s *Saver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	return func(yield func(*checkpointer.Tuple, error) bool) {
		if err := checks.ValidateListConfig(cfg, opt); err != nil {
			yield(nil, fmt.Errorf("postgres: list: %w", err))
			return
		}
		sql, args, err := s.listQuery(cfg, opt)
		if err != nil {
			yield(nil, fmt.Errorf("postgres: list: %w", err))
			return
		}
		if sql == "" {
			return // nothing can match
		}
		rows, err := s.db.Query(ctx, sql, args...)
		if err != nil {
			yield(nil, fmt.Errorf("postgres: list: %w", err))
			return
		}
		defer rows.Close()
		var r rawTuple
		for rows.Next() {
			if err := r.scan(rows); err != nil {
				yield(nil, fmt.Errorf("postgres: list: %w", err))
				return
			}
			t, err := s.decode(ctx, &r)
			if err != nil {
				yield(nil, fmt.Errorf("postgres: list: %w", err))
				return
			}
			if !yield(t, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(nil, fmt.Errorf("postgres: list: %w", err))
		}
	}
}

// listQuery builds List's statement. An empty statement means no row can
// match (a filter holding a NUL, which stored metadata never contains).
func (s *Saver) listQuery(cfg *checkpointer.Config, opt checkpointer.ListOptions) (string, []any, error) {
	var sb strings.Builder
	sb.WriteString(s.q.selectTuple)
	args := make([]any, 0, 6)
	where := func(cond string, arg any) {
		args = append(args, arg)
		if len(args) == 1 {
			sb.WriteString("\nWHERE ")
		} else {
			sb.WriteString(" AND ")
		}
		sb.WriteString(strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1))
	}
	if cfg != nil && cfg.ThreadID != "" {
		where("c.thread_id = ?", cfg.ThreadID)
	}
	if cfg != nil && !opt.AllNamespaces {
		where("c.checkpoint_ns = ?", cfg.CheckpointNS)
	}
	if cfg != nil && cfg.CheckpointID != "" {
		where("c.checkpoint_id = ?", cfg.CheckpointID)
	}
	if len(opt.Filter) > 0 {
		f, err := json.Marshal(opt.Filter)
		if err != nil {
			return "", nil, fmt.Errorf("filter: %w", err)
		}
		if strings.Contains(string(f), `\u0000`) {
			return "", nil, nil
		}
		where("c.metadata @> ?::jsonb", string(f))
	}
	if opt.Before != nil && opt.Before.CheckpointID != "" {
		where("c.checkpoint_id < ?", opt.Before.CheckpointID)
	}
	sb.WriteString("\nORDER BY c.checkpoint_id DESC")
	if opt.Limit > 0 {
		// A literal, not a parameter: with a parameter, the generic plan of
		// the prepared statement does not know the limit is small and may
		// compute the value subqueries of every row before sorting.
		sb.WriteString(" LIMIT " + strconv.Itoa(opt.Limit))
	}
	return sb.String(), args, nil
}

// rawTuple is one row of selectTuple, reused across the rows of a List.
type rawTuple struct {
	threadID, ns, id string
	parent           *string
	checkpoint       []byte
	metadata         []byte
	// Two-dimensional bytea arrays, flattened row by row.
	values pgtype.FlatArray[[]byte] // [channel, version, type, blob]...
	writes pgtype.FlatArray[[]byte] // [task_id, idx, channel, type, blob]...
	sends  pgtype.FlatArray[[]byte] // [task_id, idx, type, blob]...
}

// rowsOf splits a flattened two-dimensional array into rows of width n.
func rowsOf(flat []([]byte), n int) ([][][]byte, bool) {
	if len(flat)%n != 0 {
		return nil, false
	}
	out := make([][][]byte, 0, len(flat)/n)
	for i := 0; i < len(flat); i += n {
		out = append(out, flat[i:i+n:i+n])
	}
	return out, true
}

func (r *rawTuple) scan(rows pgx.Rows) error {
	r.parent, r.values, r.writes, r.sends = nil, nil, nil, nil
	return rows.Scan(&r.threadID, &r.ns, &r.id, &r.parent, &r.checkpoint, &r.metadata, &r.values, &r.writes, &r.sends)
}

// decode rebuilds a Tuple from a row: its arrays of value, write and send
// rows become the core's stored form, which core.Reader decodes and opens.
func (s *Saver) decode(ctx context.Context, r *rawTuple) (*checkpointer.Tuple, error) {
	st, err := r.stored()
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", r.id, err)
	}
	return s.reader.Tuple(ctx, st)
}

// stored splits the row's arrays into the core's stored form.
func (r *rawTuple) stored() (*core.Stored, error) {
	dc, err := core.DecodeCheckpointJSON(r.checkpoint)
	if err != nil {
		return nil, err
	}
	md, err := core.DecodeMetadata(r.metadata)
	if err != nil {
		return nil, err
	}
	st := &core.Stored{Thread: r.threadID, NS: r.ns, ID: r.id, Checkpoint: dc, Metadata: md}
	if r.parent != nil {
		st.Parent = *r.parent
	}
	values, ok := rowsOf(r.values, 4)
	if !ok {
		return nil, errors.New("malformed channel values")
	}
	st.Values = make([]core.Value, len(values))
	for i, e := range values {
		st.Values[i] = core.Value{Channel: string(e[0]), Version: string(e[1]), Type: string(e[2]), Data: e[3]}
	}
	writes, ok := rowsOf(r.writes, 5)
	if !ok {
		return nil, errors.New("malformed pending writes")
	}
	st.Writes = make([]core.StoredWrite, len(writes))
	for i, e := range writes {
		idx, err := strconv.Atoi(string(e[1]))
		if err != nil {
			return nil, errors.New("malformed pending write index")
		}
		st.Writes[i] = core.StoredWrite{Task: string(e[0]), Idx: idx, Channel: string(e[2]), Type: string(e[3]), Data: e[4]}
	}
	if len(r.sends) > 0 && r.parent != nil {
		sends, ok := rowsOf(r.sends, 4)
		if !ok {
			return nil, errors.New("malformed pending sends")
		}
		st.Sends = make([]core.StoredWrite, len(sends))
		for i, e := range sends {
			idx, err := strconv.Atoi(string(e[1]))
			if err != nil {
				return nil, errors.New("malformed pending send index")
			}
			st.Sends[i] = core.StoredWrite{Task: string(e[0]), Idx: idx, Channel: checkpointer.ChannelTasks, Type: string(e[2]), Data: e[3]}
		}
	}
	return st, nil
}
