package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/reencrypt"
)

// RowThreads is implemented by a driver that can list every thread
// holding any row — a value or a pending write whose checkpoint is gone
// included — which Driver.Threads (threads holding a checkpoint) may
// miss. Reencrypt uses it when the driver has it, so that no row is left
// sealed under an old key.
type RowThreads interface {
	// RowThreads returns up to limit ids of threads holding any row,
	// greater than after, ascending.
	RowThreads(ctx context.Context, after string, limit int) ([]string, error)
}

// Reencrypt implements checkpointer.Reencrypter on any driver: every
// channel value and pending write not sealed under the serializer's
// primary key (and cipher) is sealed again where it lives, a batch at a
// time. The values are read and sealed outside the driver's write
// transaction; the write then stores a value only where the row still
// holds what was read (compare and swap), so a put meanwhile wins. Like
// the SQL drivers' runs (which their savers use instead), it makes passes
// until one after the first finds nothing under an old key
// (rotate.Run), and a value that does not open stops the run with its
// error. It fails with reencrypt.ErrNotEncrypted when the serializer does
// not encrypt.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	if !s.codec.CanReencrypt() {
		return reencrypt.Stats{}, s.wrap(fmt.Errorf("%w (%T)", reencrypt.ErrNotEncrypted, s.serde))
	}
	t := &rowTable{s: s}
	st, err := rotate.Run(ctx, s.codec, opt, rotate.Table{Name: "values", Count: t.count, Fetch: t.fetch, Update: t.update})
	if err != nil {
		return st, s.wrap(err)
	}
	return st, nil
}

// rowTable is a driver's value rows as one table for rotate.Run: every
// value and pending write, thread by thread, keyed by rowKey.
type rowTable struct {
	s *Saver
	// cached are the sorted rows of thread, from the last fetch: a fetch
	// continuing inside a thread does not read it again. A pass starts
	// without it.
	thread string
	cached []rotate.Row
}

// The key of a row: (thread, kind, namespace, channel or checkpoint,
// version or task, index), kind 0 for a value and 1 for a write.
func rowKey(thread string, kind int, ns, a, b string, idx int) []any {
	return []any{thread, kind, ns, a, b, idx}
}

func compareKeys(x, y []any) int {
	for i := range x {
		var c int
		switch v := x[i].(type) {
		case string:
			c = cmp.Compare(v, y[i].(string))
		case int:
			c = cmp.Compare(v, y[i].(int))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// threads pages through the threads the driver lists for re-encryption.
func (t *rowTable) threads(ctx context.Context, after string, limit int) ([]string, error) {
	if rt, ok := t.s.d.(RowThreads); ok {
		return rt.RowThreads(ctx, after, limit)
	}
	return t.s.d.Threads(ctx, after, limit)
}

// rows reads thread's value rows, sorted by key, in a transaction of
// their own.
func (t *rowTable) rows(ctx context.Context, thread string) ([]rotate.Row, error) {
	var out []rotate.Row
	err := t.s.update(ctx, func(tx checkpointer.DriverTx) error {
		rows, err := tx.Rows(ctx, thread)
		if err != nil {
			return err
		}
		out = valueRows(t.s.codec, thread, rows)
		return nil
	})
	return out, err
}

// valueRows lists rows' values and writes as rotate rows, sorted by key.
// Rows without a value ("empty") are not values to reseal.
func valueRows(codec binding.Codec, thread string, rows *checkpointer.ThreadRows) []rotate.Row {
	out := make([]rotate.Row, 0, len(rows.Values)+len(rows.Writes))
	for _, v := range rows.Values {
		if v.Data == nil {
			continue
		}
		at := binding.Blob{Thread: thread, NS: v.NS, Channel: v.Channel, Version: v.Version}
		out = append(out, codec.Row(rowKey(thread, 0, v.NS, v.Channel, v.Version, 0), at, v.Type, v.Data))
	}
	for _, w := range rows.Writes {
		at := binding.Write{Thread: thread, NS: w.NS, Checkpoint: w.Checkpoint, Task: w.Task, Idx: w.Idx, Channel: w.Channel}
		out = append(out, codec.Row(rowKey(thread, 1, w.NS, w.Checkpoint, w.Task, w.Idx), at, w.Type, w.Data))
	}
	slices.SortFunc(out, func(a, b rotate.Row) int { return compareKeys(a.Key, b.Key) })
	return out
}

const threadPage = 256

func (t *rowTable) count(ctx context.Context) (int64, error) {
	var n int64
	after := ""
	for {
		page, err := t.threads(ctx, after, threadPage)
		if err != nil {
			return 0, err
		}
		for _, thread := range page {
			rows, err := t.rows(ctx, thread)
			if err != nil {
				return 0, err
			}
			n += int64(len(rows))
		}
		if len(page) < threadPage {
			return n, nil
		}
		after = page[len(page)-1]
	}
}

// fetch returns up to limit rows after the key after (nil: a new pass).
func (t *rowTable) fetch(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
	var out []rotate.Row
	thread := ""
	if after == nil {
		t.thread, t.cached = "", nil
	} else {
		// The rest of the thread the last fetch stopped in.
		thread = after[0].(string)
		if t.thread != thread {
			rows, err := t.rows(ctx, thread)
			if err != nil {
				return nil, err
			}
			t.thread, t.cached = thread, rows
		}
		i, _ := slices.BinarySearchFunc(t.cached, after, func(r rotate.Row, k []any) int { return compareKeys(r.Key, k) })
		for i < len(t.cached) && compareKeys(t.cached[i].Key, after) <= 0 {
			i++
		}
		out = append(out, t.cached[i:min(len(t.cached), i+limit)]...)
	}
	for len(out) < limit {
		page, err := t.threads(ctx, thread, threadPage)
		if err != nil {
			return nil, err
		}
		for _, th := range page {
			rows, err := t.rows(ctx, th)
			if err != nil {
				return nil, err
			}
			thread, t.thread, t.cached = th, th, rows
			out = append(out, rows[:min(len(rows), limit-len(out))]...)
			if len(out) == limit {
				return out, nil
			}
		}
		if len(page) < threadPage {
			break
		}
	}
	return out, nil
}

// update stores the changes where the rows still hold what was read, in
// one transaction.
func (t *rowTable) update(ctx context.Context, changes []rotate.Change) error {
	byThread := map[string][]rotate.Change{}
	var order []string
	for _, c := range changes {
		th := c.Key[0].(string)
		if _, ok := byThread[th]; !ok {
			order = append(order, th)
		}
		byThread[th] = append(byThread[th], c)
	}
	return t.s.update(ctx, func(tx checkpointer.DriverTx) error {
		for _, th := range order {
			rows, err := tx.Rows(ctx, th)
			if err != nil {
				return err
			}
			if out := swapped(th, rows, byThread[th]); out != nil {
				if err := tx.Overwrite(ctx, th, out); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// swapped returns the rows of thread that still hold a change's old value,
// holding its new one (nil when none do).
func swapped(thread string, rows *checkpointer.ThreadRows, changes []rotate.Change) *checkpointer.ThreadRows {
	want := make(map[[6]any]rotate.Change, len(changes))
	for _, c := range changes {
		want[[6]any(c.Key)] = c
	}
	var out checkpointer.ThreadRows
	for _, v := range rows.Values {
		c, ok := want[[6]any(rowKey(thread, 0, v.NS, v.Channel, v.Version, 0))]
		if ok && v.Type == c.Typ && bytes.Equal(v.Data, c.Data) {
			v.Type, v.Data = c.NewTyp, c.NewData
			out.Values = append(out.Values, v)
		}
	}
	for _, w := range rows.Writes {
		c, ok := want[[6]any(rowKey(thread, 1, w.NS, w.Checkpoint, w.Task, w.Idx))]
		if ok && w.Type == c.Typ && bytes.Equal(w.Data, c.Data) {
			w.Type, w.Data = c.NewTyp, c.NewData
			out.Writes = append(out.Writes, w)
		}
	}
	if len(out.Values) == 0 && len(out.Writes) == 0 {
		return nil
	}
	return &out
}
