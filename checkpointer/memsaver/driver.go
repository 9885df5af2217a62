package memsaver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/jsonvalue"
)

// storage is the memory driver (checkpointer.Driver): LangGraph's storage,
// blobs and writes dictionaries, per thread and namespace, under one
// lock. Savers sharing data (WithSerde) share it.
type storage struct {
	mu      sync.RWMutex
	threads map[string]map[string]*namespace // thread id -> namespace -> data
}

var _ checkpointer.Driver = (*storage)(nil)

func newStorage() *storage { return &storage{threads: map[string]map[string]*namespace{}} }

// namespace holds one (thread, namespace) pair.
type namespace struct {
	checkpoints map[string]*record
	ids         []string                            // checkpoint ids, ascending
	blobs       map[chanVersion]blob                // (channel, version) -> value
	writes      map[string]map[taskIdx]*storedWrite // checkpoint id -> writes
}

// record is a stored checkpoint without its values. Records, blob bytes
// and stored writes are immutable once stored (a write replaces them), so
// a reader may hold them without the lock and a snapshot may share them.
type record struct {
	v         int
	id        string
	parent    string
	ts        time.Time
	versions  map[string]string
	seen      map[string]map[string]string
	updated   []string
	doc, meta []byte // as the engine encoded them, for copies
	// md is meta decoded, at the first read that needs it (a put does
	// not: decoding was a quarter of a put's allocations); copied before
	// it is handed out.
	mdOnce sync.Once
	md     map[string]any
}

// metadata returns rec's metadata decoded.
func (rec *record) metadata() map[string]any {
	rec.mdOnce.Do(func() {
		md, _ := jsonvalue.Unmarshal(rec.meta) // valid: newRecord checked it
		if rec.md, _ = md.(map[string]any); rec.md == nil {
			rec.md = map[string]any{}
		}
	})
	return rec.md
}

// newRecord is the record of p; a put's rows carry the caller's
// checkpoint, rows read back by Rows a copy of the record's.
func newRecord(p *checkpointer.PutRows) (*record, error) {
	if !json.Valid(p.Meta) {
		return nil, fmt.Errorf("checkpoint %q: metadata: invalid JSON", p.ID)
	}
	cp := p.Checkpoint
	return &record{v: cp.V, id: p.ID, parent: p.Parent, ts: cp.TS, versions: maps.Clone(cp.ChannelVersions),
		seen: cloneSeen(cp.VersionsSeen), updated: slices.Clone(cp.UpdatedChannels), doc: p.Doc, meta: p.Meta}, nil
}

// checkpoint is a copy of rec's checkpoint, without values.
func (rec *record) checkpoint() *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{V: rec.v, ID: rec.id, TS: rec.ts, ChannelVersions: maps.Clone(rec.versions),
		VersionsSeen: cloneSeen(rec.seen), UpdatedChannels: slices.Clone(rec.updated)}
}

func cloneSeen(m map[string]map[string]string) map[string]map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]map[string]string, len(m))
	for k, v := range m {
		out[k] = maps.Clone(v)
	}
	return out
}

type chanVersion struct{ channel, version string }

// blob is a serialized value.
type blob struct {
	typ  string
	data []byte
}

type taskIdx struct {
	task string
	idx  int
}

type storedWrite struct {
	task, path, channel string
	idx                 int
	value               blob
}

func newNamespace() *namespace {
	return &namespace{
		checkpoints: map[string]*record{},
		blobs:       map[chanVersion]blob{},
		writes:      map[string]map[taskIdx]*storedWrite{},
	}
}

// clone is a copy of n sharing its immutable records, blobs and writes.
func (n *namespace) clone() *namespace {
	c := &namespace{checkpoints: maps.Clone(n.checkpoints), ids: slices.Clone(n.ids), blobs: maps.Clone(n.blobs),
		writes: make(map[string]map[taskIdx]*storedWrite, len(n.writes))}
	for id, ws := range n.writes {
		c.writes[id] = maps.Clone(ws)
	}
	return c
}

func (n *namespace) empty() bool {
	return len(n.checkpoints) == 0 && len(n.blobs) == 0 && len(n.writes) == 0
}

// writesOf returns the pending writes of checkpoint id, creating the map.
func (n *namespace) writesOf(id string) map[taskIdx]*storedWrite {
	ws := n.writes[id]
	if ws == nil {
		ws = map[taskIdx]*storedWrite{}
		n.writes[id] = ws
	}
	return ws
}

// add stores rec, replacing a checkpoint with the same id.
func (n *namespace) add(rec *record) {
	if _, ok := n.checkpoints[rec.id]; !ok {
		i, _ := slices.BinarySearch(n.ids, rec.id)
		n.ids = slices.Insert(n.ids, i, rec.id)
	}
	n.checkpoints[rec.id] = rec
}

// latest returns the greatest checkpoint id, "" when there is none.
func (n *namespace) latest() string {
	if n == nil || len(n.ids) == 0 {
		return ""
	}
	return n.ids[len(n.ids)-1]
}

// Name implements checkpointer.Driver.
func (*storage) Name() string { return "memory" }

// Capabilities implements checkpointer.Driver: the engine filters
// metadata.
func (*storage) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{Serialized: true, DecodedDocuments: true}
}

// Load implements checkpointer.Driver.
func (s *storage) Load(_ context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.threads[thread][ns]
	if n == nil {
		return nil, nil
	}
	if id == "" {
		id = n.latest()
	}
	rec := n.checkpoints[id]
	if rec == nil {
		return nil, nil
	}
	return n.stored(thread, ns, rec), nil
}

// stored gathers rec's rows; the caller holds the lock.
func (n *namespace) stored(thread, ns string, rec *record) *checkpointer.StoredCheckpoint {
	st := &checkpointer.StoredCheckpoint{Thread: thread, NS: ns, ID: rec.id, Parent: rec.parent, Doc: rec.doc, Meta: rec.meta,
		Decoded: engine.DocumentOf(rec.checkpoint()), Metadata: jsonvalue.Copy(rec.metadata()).(map[string]any)}
	if len(rec.versions) > 0 {
		st.Values = make([]checkpointer.ValueRow, 0, len(rec.versions))
		for ch, ver := range rec.versions {
			if b, ok := n.blobs[chanVersion{ch, ver}]; ok {
				st.Values = append(st.Values, checkpointer.ValueRow{Channel: ch, Version: ver, Type: b.typ, Data: b.data})
			}
		}
	}
	if ws := n.writes[rec.id]; len(ws) > 0 {
		st.Writes = writeRows(slices.SortedFunc(maps.Values(ws), func(a, b *storedWrite) int {
			return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx))
		}))
	}
	if rec.v < 4 && rec.parent != "" {
		var sends []*storedWrite
		for _, w := range n.writes[rec.parent] {
			if w.channel == checkpointer.ChannelTasks {
				sends = append(sends, w)
			}
		}
		slices.SortFunc(sends, func(a, b *storedWrite) int {
			return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx))
		})
		st.Sends = writeRows(sends)
	}
	return st
}

func writeRows(ws []*storedWrite) []checkpointer.WriteRow {
	if len(ws) == 0 {
		return nil
	}
	out := make([]checkpointer.WriteRow, len(ws))
	for i, w := range ws {
		out[i] = checkpointer.WriteRow{Task: w.task, Path: w.path, Idx: w.idx, Channel: w.channel, Type: w.value.typ, Data: w.value.data}
	}
	return out
}

type ref struct {
	thread, ns string
	rec        *record
}

// Scan implements checkpointer.Driver. The matching records are taken
// under the read lock when iteration starts; each checkpoint's rows are
// gathered when the consumer reaches it, and a checkpoint deleted or
// replaced in between is skipped.
func (s *storage) Scan(ctx context.Context, q checkpointer.DriverQuery) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	return func(yield func(*checkpointer.StoredCheckpoint, error) bool) {
		for _, r := range s.match(q) {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			s.mu.RLock()
			var st *checkpointer.StoredCheckpoint
			if n := s.threads[r.thread][r.ns]; n != nil && n.checkpoints[r.rec.id] == r.rec {
				st = n.stored(r.thread, r.ns, r.rec)
			}
			s.mu.RUnlock()
			if st != nil && !yield(st, nil) {
				return
			}
		}
	}
}

// match returns the records q selects, newest first, its limit applied.
func (s *storage) match(q checkpointer.DriverQuery) []ref {
	var refs []ref
	visit := func(thread, ns string, n *namespace) {
		if q.ID != "" {
			if rec := n.checkpoints[q.ID]; rec != nil && (q.Before == "" || rec.id < q.Before) {
				refs = append(refs, ref{thread, ns, rec})
			}
			return
		}
		end := len(n.ids)
		if q.Before != "" {
			end, _ = slices.BinarySearch(n.ids, q.Before)
		}
		// With a limit, no namespace needs to give more than limit.
		start := 0
		if q.Limit > 0 {
			start = max(0, end-q.Limit)
		}
		for i := end - 1; i >= start; i-- {
			refs = append(refs, ref{thread, ns, n.checkpoints[n.ids[i]]})
		}
	}
	visitThread := func(thread string, t map[string]*namespace) {
		if q.NS != nil {
			if n := t[*q.NS]; n != nil {
				visit(thread, *q.NS, n)
			}
			return
		}
		for ns, n := range t {
			visit(thread, ns, n)
		}
	}
	s.mu.RLock()
	if q.Thread == "" {
		for thread, t := range s.threads {
			visitThread(thread, t)
		}
	} else if t := s.threads[q.Thread]; t != nil {
		visitThread(q.Thread, t)
	}
	s.mu.RUnlock()
	slices.SortFunc(refs, func(a, b ref) int {
		return cmp.Or(cmp.Compare(b.rec.id, a.rec.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns))
	})
	if q.Limit > 0 && len(refs) > q.Limit {
		refs = refs[:q.Limit]
	}
	return refs
}

// Threads implements checkpointer.Driver.
func (s *storage) Threads(_ context.Context, after string, limit int) ([]string, error) {
	s.mu.RLock()
	var ids []string
	for thread, t := range s.threads {
		if thread > after && holdsCheckpoint(t) {
			ids = append(ids, thread)
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	return ids[:min(limit, len(ids))], nil
}

// RowThreads implements engine.RowThreads: every thread holding any row,
// for re-encryption.
func (s *storage) RowThreads(_ context.Context, after string, limit int) ([]string, error) {
	s.mu.RLock()
	var ids []string
	for thread := range s.threads {
		if thread > after {
			ids = append(ids, thread)
		}
	}
	s.mu.RUnlock()
	slices.Sort(ids)
	return ids[:min(limit, len(ids))], nil
}

func holdsCheckpoint(t map[string]*namespace) bool {
	for _, n := range t {
		if len(n.checkpoints) > 0 {
			return true
		}
	}
	return false
}

// ThreadInfos implements checkpointer.Driver from a snapshot of the
// thread index.
func (s *storage) ThreadInfos(context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		s.mu.RLock()
		out := make([]checkpointer.ThreadInfo, 0, len(s.threads))
		for thread, t := range s.threads {
			ti := checkpointer.ThreadInfo{ThreadID: thread}
			for _, n := range t {
				ti.Checkpoints += len(n.checkpoints)
				ti.LatestCheckpointID = max(ti.LatestCheckpointID, n.latest())
			}
			if ti.Checkpoints > 0 {
				out = append(out, ti)
			}
		}
		s.mu.RUnlock()
		slices.SortFunc(out, func(a, b checkpointer.ThreadInfo) int {
			return cmp.Or(cmp.Compare(b.LatestCheckpointID, a.LatestCheckpointID), cmp.Compare(a.ThreadID, b.ThreadID))
		})
		for _, ti := range out {
			if !yield(ti, nil) {
				return
			}
		}
	}
}

// Put implements checkpointer.Driver under the write lock. A put fails
// before it changes anything, so it saves nothing to restore.
func (s *storage) Put(ctx context.Context, p *checkpointer.PutRows) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return (&memTx{s: s, direct: true}).Put(ctx, p)
}

// PutWrites implements checkpointer.Driver under the write lock, as Put.
func (s *storage) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return (&memTx{s: s, direct: true}).PutWrites(ctx, w)
}

// Heads implements checkpointer.Driver under the read lock.
func (s *storage) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return (&memTx{s: s}).Heads(ctx, sel)
}

// DeleteThreads implements checkpointer.Driver under the write lock.
func (s *storage) DeleteThreads(ctx context.Context, threads []string) error {
	return s.Update(ctx, func(tx checkpointer.DriverTx) error {
		_, err := tx.DeleteThreads(ctx, threads, false)
		return err
	})
}

// Update implements checkpointer.Driver: fn runs under the write lock;
// every namespace it changes is saved first and restored when it fails.
func (s *storage) Update(_ context.Context, fn func(tx checkpointer.DriverTx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := &memTx{s: s}
	done := false
	defer func() {
		if !done { // fn failed or panicked: nothing it changed stays
			tx.rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	done = true
	return nil
}

// memTx is a transaction: the write lock held, and the namespaces as they
// were before it changed them.
type memTx struct {
	s     *storage
	saved map[[2]string]*namespace // nil: did not exist
	// direct: a single put, which fails before it changes anything;
	// nothing is saved.
	direct bool
}

// ns returns the namespace to change, saving it first.
func (tx *memTx) ns(thread, ns string) *namespace {
	t := tx.s.threads[thread]
	if t == nil {
		t = map[string]*namespace{}
		tx.s.threads[thread] = t
	}
	n := t[ns]
	if tx.direct {
		if n == nil {
			n = newNamespace()
			t[ns] = n
		}
		return n
	}
	k := [2]string{thread, ns}
	if tx.saved == nil {
		tx.saved = map[[2]string]*namespace{}
	}
	if _, ok := tx.saved[k]; !ok {
		if n != nil {
			tx.saved[k] = n.clone()
		} else {
			tx.saved[k] = nil
		}
	}
	if n == nil {
		n = newNamespace()
		t[ns] = n
	}
	return n
}

func (tx *memTx) rollback() {
	for k, n := range tx.saved {
		t := tx.s.threads[k[0]]
		if n != nil {
			if t == nil {
				t = map[string]*namespace{}
				tx.s.threads[k[0]] = t
			}
			t[k[1]] = n
			continue
		}
		if t != nil {
			delete(t, k[1])
		}
	}
	tx.tidy()
}

// tidy drops the empty namespaces and threads the transaction touched.
func (tx *memTx) tidy() {
	for k := range tx.saved {
		t := tx.s.threads[k[0]]
		if n := t[k[1]]; n != nil && n.empty() {
			delete(t, k[1])
		}
		if t != nil && len(t) == 0 {
			delete(tx.s.threads, k[0])
		}
	}
}

// Put implements checkpointer.DriverTx.
func (tx *memTx) Put(ctx context.Context, p *checkpointer.PutRows) error {
	if err := p.Fence.Check(ctx); err != nil {
		return err
	}
	if p.NeedsParent {
		if _, ok := tx.s.threads[p.Thread][p.NS].checkpointsOrNil()[p.Parent]; !ok {
			return p.ErrParentMissing()
		}
	}
	rec, err := newRecord(p)
	if err != nil {
		return err
	}
	n := tx.ns(p.Thread, p.NS)
	for _, v := range p.Values {
		k := chanVersion{v.Channel, v.Version}
		if _, ok := n.blobs[k]; !ok {
			n.blobs[k] = blob{v.Type, v.Data}
		}
	}
	if old := n.checkpoints[rec.id]; old != nil {
		rec.parent = old.parent
	}
	n.add(rec)
	return nil
}

func (n *namespace) checkpointsOrNil() map[string]*record {
	if n == nil {
		return nil
	}
	return n.checkpoints
}

// PutWrites implements checkpointer.DriverTx.
func (tx *memTx) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	if err := w.Fence.Check(ctx); err != nil {
		return err
	}
	ws := tx.ns(w.Thread, w.NS).writesOf(w.Checkpoint)
	for _, r := range w.Rows {
		k := taskIdx{w.Task, r.Idx}
		if _, exists := ws[k]; exists && !w.Upsert {
			continue
		}
		ws[k] = &storedWrite{task: w.Task, path: w.Path, channel: r.Channel, idx: r.Idx, value: blob{r.Type, r.Data}}
	}
	return nil
}

// Fence implements checkpointer.DriverTx.
func (tx *memTx) Fence(ctx context.Context, f checkpointer.WriteFence) error { return f.Check(ctx) }

// Lock implements checkpointer.DriverTx: Update holds the only write
// lock, so there is nothing more to take (the engine does not ask).
func (tx *memTx) Lock(ctx context.Context, _ []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return tx.Heads(ctx, sel)
}

// Heads implements checkpointer.DriverTx.
func (tx *memTx) Heads(_ context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	var out []checkpointer.Head
	add := func(thread, ns string, n *namespace) {
		for _, rec := range n.checkpoints {
			out = append(out, checkpointer.Head{Thread: thread, NS: ns, ID: rec.id, Stored: true, Parent: rec.parent, V: rec.v, RunID: rec.runID()})
		}
		for id := range n.writes {
			if _, ok := n.checkpoints[id]; !ok {
				out = append(out, checkpointer.Head{Thread: thread, NS: ns, ID: id})
			}
		}
	}
	if len(sel.RunIDs) > 0 {
		for thread, t := range tx.s.threads {
			for ns, n := range t {
				for _, rec := range n.checkpoints {
					if r := rec.runID(); r != "" && slices.Contains(sel.RunIDs, r) {
						add(thread, ns, n)
						break
					}
				}
			}
		}
		return out, nil
	}
	for _, thread := range sel.Threads {
		for ns, n := range tx.s.threads[thread] {
			if sel.NS == nil || *sel.NS == ns {
				add(thread, ns, n)
			}
		}
	}
	return out, nil
}

// runID is the metadata's run_id when it is a string.
func (rec *record) runID() string {
	s, _ := rec.metadata()["run_id"].(string)
	return s
}

// Remove implements checkpointer.DriverTx.
func (tx *memTx) Remove(_ context.Context, rs []checkpointer.Removal, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, r := range rs {
		if tx.s.threads[r.Thread][r.NS] == nil {
			continue
		}
		n := tx.ns(r.Thread, r.NS)
		gone := make(map[string]bool, len(r.IDs))
		for _, id := range r.IDs {
			gone[id] = true
			if _, ok := n.checkpoints[id]; ok {
				rep.Checkpoints++
			}
			keepSends := slices.Contains(r.KeepSends, id)
			for k, w := range n.writes[id] {
				if keepSends && w.channel == checkpointer.ChannelTasks {
					continue
				}
				rep.Writes++
				if !countOnly {
					delete(n.writes[id], k)
				}
			}
			if !countOnly {
				if len(n.writes[id]) == 0 {
					delete(n.writes, id)
				}
				delete(n.checkpoints, id)
			}
		}
		live := make(map[chanVersion]bool, len(n.blobs))
		for id, rec := range n.checkpoints {
			if countOnly && gone[id] {
				continue
			}
			for ch, ver := range rec.versions {
				live[chanVersion{ch, ver}] = true
			}
		}
		for k := range n.blobs {
			if !live[k] {
				rep.Blobs++
				if !countOnly {
					delete(n.blobs, k)
				}
			}
		}
		if !countOnly {
			n.ids = slices.DeleteFunc(n.ids, func(id string) bool { return gone[id] })
		}
	}
	tx.tidy()
	return rep, nil
}

// DeleteThreads implements checkpointer.DriverTx.
func (tx *memTx) DeleteThreads(_ context.Context, threads []string, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, thread := range threads {
		for ns, n := range tx.s.threads[thread] {
			rep.Checkpoints += int64(len(n.checkpoints))
			rep.Blobs += int64(len(n.blobs))
			for _, ws := range n.writes {
				rep.Writes += int64(len(ws))
			}
			if !countOnly {
				tx.ns(thread, ns)
			}
		}
		if !countOnly {
			delete(tx.s.threads, thread)
		}
	}
	return rep, nil
}

// Rows implements checkpointer.DriverTx.
func (tx *memTx) Rows(_ context.Context, thread string) (*checkpointer.ThreadRows, error) {
	rows := &checkpointer.ThreadRows{}
	for ns, n := range tx.s.threads[thread] {
		for _, rec := range n.checkpoints {
			rows.Checkpoints = append(rows.Checkpoints, checkpointer.PutRows{Thread: thread, NS: ns, ID: rec.id, Parent: rec.parent,
				V: rec.v, Doc: rec.doc, Meta: rec.meta, Versions: rec.versions, Checkpoint: rec.checkpoint()})
		}
		for k, b := range n.blobs {
			rows.Values = append(rows.Values, checkpointer.NamespacedValue{NS: ns,
				ValueRow: checkpointer.ValueRow{Channel: k.channel, Version: k.version, Type: b.typ, Data: b.data}})
		}
		for id, ws := range n.writes {
			for _, w := range ws {
				rows.Writes = append(rows.Writes, checkpointer.NamespacedWrite{NS: ns, Checkpoint: id,
					WriteRow: checkpointer.WriteRow{Task: w.task, Path: w.path, Idx: w.idx, Channel: w.channel, Type: w.value.typ, Data: w.value.data}})
			}
		}
	}
	return rows, nil
}

// Overwrite implements checkpointer.DriverTx.
func (tx *memTx) Overwrite(_ context.Context, thread string, rows *checkpointer.ThreadRows) error {
	for _, c := range rows.Checkpoints {
		rec, err := newRecord(&c)
		if err != nil {
			return err
		}
		tx.ns(thread, c.NS).add(rec)
	}
	for _, v := range rows.Values {
		tx.ns(thread, v.NS).blobs[chanVersion{v.Channel, v.Version}] = blob{v.Type, v.Data}
	}
	for _, w := range rows.Writes {
		tx.ns(thread, w.NS).writesOf(w.Checkpoint)[taskIdx{w.Task, w.Idx}] = &storedWrite{task: w.Task, path: w.Path,
			channel: w.Channel, idx: w.Idx, value: blob{w.Type, w.Data}}
	}
	return nil
}
