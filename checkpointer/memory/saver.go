package memory

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/memvault/memvault/checkpointer/internal/checks"
	"github.com/memvault/memvault/jsonvalue"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// Options configures an InMemorySaver. The zero value is ready to use.
type Options struct {
	// Serde encodes channel values and pending writes. Default:
	// serde.JSONPlus{}. A serde.BoundSerializer (such as an encrypting one)
	// is given the associated data of each value's location, as every
	// backend builds it.
	Serde serde.Serializer
	// VersionStyle selects how NextVersion spells versions. Default:
	// checkpointer.VersionString (Python LangGraph's style). New refuses a
	// value that is not a VersionStyle constant
	// (checkpointer.ErrInvalidVersionStyle).
	VersionStyle checkpointer.VersionStyle
	// Retention, when not empty, is applied by a background goroutine
	// every SweepInterval until Close (see Sweep); New refuses a policy
	// with negative fields (checkpointer.ErrInvalidPolicy), as the SQL
	// savers do. Default: keep everything, no goroutine.
	Retention checkpointer.RetentionPolicy
	// SweepInterval is how often the Retention policy runs: 0 means an
	// hour (core.DefaultSweepEvery), a negative value never (call Sweep
	// yourself).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
}

// InMemorySaver is a checkpointer.Saver that keeps serialized checkpoints,
// values and writes in memory. It is safe for concurrent use. Create it with
// New.
//
// DeleteThread, Prune, CopyThread, DeleteForRuns and DeleteCheckpoint are
// the checkpointer core's (argument checks, trivial cases) around this
// saver's in-memory operations, each under the saver's write lock.
type InMemorySaver struct {
	*front
	serde serde.Serializer
	codec binding.Codec // serde, binding values to their location
	style checkpointer.VersionStyle
	*storage
	sweeper *core.Background // nil without a retention policy
}

// storage is what savers sharing data (see WithSerde) share.
type storage struct {
	mu      sync.RWMutex
	threads map[string]map[string]*namespace // thread id -> namespace -> data
}

// InMemorySaver implements every saver interface (core.Complete lists
// them).
var _ core.Complete = (*InMemorySaver)(nil)

// front is the checkpointer core's side of the management methods.
type front = core.Front

// namespace holds one (thread, namespace) pair: LangGraph's storage, blobs
// and writes dictionaries restricted to it.
type namespace struct {
	checkpoints map[string]*record
	ids         []string                            // checkpoint ids, ascending
	blobs       map[chanVersion]blob                // (channel, version) -> value
	writes      map[string]map[taskIdx]*storedWrite // checkpoint id -> writes
}

// record is a stored checkpoint without its values. Records are immutable
// once stored (Put replaces them), so readers may hold them without the lock.
type record struct {
	v        int
	id       string
	ts       time.Time
	versions map[string]string
	seen     map[string]map[string]string
	updated  []string
	metadata map[string]any // decoded JSON; copied before it is handed out
	parent   string
}

type chanVersion struct{ channel, version string }

// blob is a serialized value; data is never modified after it is stored.
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

// New returns an empty InMemorySaver. Options every saver shares are
// checked as every saver's constructor checks them: an unknown
// VersionStyle (checkpointer.ErrInvalidVersionStyle) or a Retention policy
// with a negative field (checkpointer.ErrInvalidPolicy) is refused.
func New(opt Options) (*InMemorySaver, error) {
	if err := core.CheckOptions("memory", opt.VersionStyle, opt.Retention); err != nil {
		return nil, err
	}
	s := opt.Serde
	if s == nil {
		s = serde.JSONPlus{}
	}
	sv := newSaver(s, opt.VersionStyle, &storage{threads: map[string]map[string]*namespace{}})
	sv.sweeper = core.StartSweeper(opt.Retention, opt.SweepInterval, sv.Sweep, opt.OnSweep)
	return sv, nil
}

// Close stops the background sweeper, if any, waiting for it to return.
// The saver's data stays usable; Close only ends the goroutine.
func (s *InMemorySaver) Close() error {
	s.sweeper.Stop()
	return nil
}

// newSaver returns a saver on st that encodes with ser.
func newSaver(ser serde.Serializer, style checkpointer.VersionStyle, st *storage) *InMemorySaver {
	s := &InMemorySaver{serde: ser, codec: binding.New(ser), style: style, storage: st}
	s.front = core.NewFront("memory", core.Hooks{
		DeleteThread:     s.deleteThread,
		Prune:            s.prune,
		CopyThread:       s.copyThread,
		DeleteForRuns:    s.deleteForRuns,
		DeleteCheckpoint: s.deleteCheckpoint,
	})
	return s
}

// WithSerde returns a saver over the same stored data that encodes and
// decodes with ser (nil means serde.JSONPlus{}), as a restarted process
// configured with another serializer would: after a key rotation, a saver
// whose keyring has the new primary key reads the old values and
// Reencrypt rewrites them. Both savers stay usable and share one lock.
func (s *InMemorySaver) WithSerde(ser serde.Serializer) *InMemorySaver {
	if ser == nil {
		ser = serde.JSONPlus{}
	}
	return newSaver(ser, s.style, s.storage)
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

// checkpointsOrNil returns n's checkpoints; nil for a nil n (a namespace
// that does not exist).
func (n *namespace) checkpointsOrNil() map[string]*record {
	if n == nil {
		return nil
	}
	return n.checkpoints
}

// latest returns the greatest checkpoint id, "" when there is none.
func (n *namespace) latest() string {
	if len(n.ids) == 0 {
		return ""
	}
	return n.ids[len(n.ids)-1]
}

// reindex rebuilds ids after checkpoints were deleted.
func (n *namespace) reindex() {
	n.ids = slices.Sorted(maps.Keys(n.checkpoints))
}

func newNamespace() *namespace {
	return &namespace{
		checkpoints: map[string]*record{},
		blobs:       map[chanVersion]blob{},
		writes:      map[string]map[taskIdx]*storedWrite{},
	}
}

// DrainWrites returns once every write that began before it has finished:
// an erasure calls it after destroying a subject's keys, so that the rows it
// then deletes include every write that found those keys live.
func (s *InMemorySaver) DrainWrites(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil
}

// NextVersion implements checkpointer.Saver.
func (s *InMemorySaver) NextVersion(current string) string {
	return core.NextVersionStyle(s.style, current)
}

// Put implements checkpointer.Saver.
func (s *InMemorySaver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	if err := checks.ValidatePut(cfg, cp, newVersions); err != nil {
		return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
	}
	meta, err := storedMetadata(cfg, md)
	if err != nil {
		return checkpointer.Config{}, err
	}
	if err := s.codec.BindThread(ctx, cfg.ThreadID, md); err != nil {
		return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
	}
	thread, ns := cfg.ThreadID, cfg.CheckpointNS
	blobs := make(map[chanVersion]blob, len(newVersions))
	var fence binding.Fence
	for ch, ver := range newVersions {
		b, err := core.SealBlob(ctx, s.codec, thread, ns, ch, ver, cp.ChannelValues, &fence)
		if err != nil {
			return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
		}
		blobs[chanVersion{ch, ver}] = blob{typ: b.Type, data: b.Data}
	}
	rec := &record{
		v:        cp.V,
		id:       cp.ID,
		ts:       cp.TS,
		versions: maps.Clone(cp.ChannelVersions),
		seen:     cloneSeen(cp.VersionsSeen),
		updated:  slices.Clone(cp.UpdatedChannels),
		metadata: meta,
		parent:   cfg.CheckpointID,
	}

	if err := s.codec.FenceThread(ctx, thread, &fence); err != nil {
		return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Under the lock an erasure (DrainWrites) cannot interleave.
	if err := s.codec.Check(ctx, &fence); err != nil {
		return checkpointer.Config{}, fmt.Errorf("memory: %w", err)
	}
	// Under the lock a sweep or delete cannot interleave either: a put
	// that inherits values from a parent that is gone would keep a
	// checkpoint lacking them.
	if core.NeedsParent(cfg, cp, newVersions) {
		if _, ok := s.threads[thread][ns].checkpointsOrNil()[cfg.CheckpointID]; !ok {
			return checkpointer.Config{}, fmt.Errorf("memory: put %s: %w", cp.ID, core.ParentMissing(thread, ns, cfg.CheckpointID))
		}
	}
	n := s.namespaceLocked(thread, ns)
	// LangGraph's insert semantics, as the SQL backends' ON CONFLICT
	// clauses: a (channel, version) keeps the first value stored at it,
	// and a checkpoint put again under its id keeps its first parent.
	for k, b := range blobs {
		if _, ok := n.blobs[k]; !ok {
			n.blobs[k] = b
		}
	}
	if old := n.checkpoints[rec.id]; old != nil {
		rec.parent = old.parent
	}
	n.add(rec)
	return checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: cp.ID}, nil
}

// storedMetadata returns md as it is stored: LangGraph's serializable
// metadata, round-tripped through JSON so that it holds only plain JSON
// values, exactly as the SQL backends give it back.
func storedMetadata(cfg checkpointer.Config, md checkpointer.Metadata) (map[string]any, error) {
	b, err := core.EncodeMetadata(cfg, md)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	v, err := core.DecodeJSONValue(b)
	if err != nil {
		return nil, fmt.Errorf("memory: metadata: %w", err)
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func (s *InMemorySaver) namespaceLocked(thread, ns string) *namespace {
	t := s.threads[thread]
	if t == nil {
		t = map[string]*namespace{}
		s.threads[thread] = t
	}
	n := t[ns]
	if n == nil {
		n = newNamespace()
		t[ns] = n
	}
	return n
}

// PutWrites implements checkpointer.Saver.
func (s *InMemorySaver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	w, err := core.PutWrites(ctx, s.codec, cfg, writes, taskID, taskPath)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if w == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.codec.Check(ctx, &w.Fence); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	n := s.namespaceLocked(w.Thread, w.NS)
	ws := n.writesOf(w.Checkpoint)
	for _, r := range w.Rows {
		k := taskIdx{w.Task, r.Idx}
		if _, exists := ws[k]; exists && !w.Upsert {
			continue
		}
		ws[k] = &storedWrite{task: w.Task, path: w.TaskPath, channel: r.Channel, idx: r.Idx, value: blob{r.Type, r.Data}}
	}
	return nil
}

// GetTuple implements checkpointer.Saver.
func (s *InMemorySaver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if err := checks.ValidateConfig(cfg); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	s.mu.RLock()
	n := s.threads[cfg.ThreadID][cfg.CheckpointNS]
	var raw *rawTuple
	if n != nil {
		id := cfg.CheckpointID
		if id == "" {
			id = n.latest()
		}
		if rec := n.checkpoints[id]; rec != nil {
			raw = s.collectLocked(cfg.ThreadID, cfg.CheckpointNS, n, rec)
		}
	}
	s.mu.RUnlock()
	if raw == nil {
		return nil, nil
	}
	return s.decode(ctx, raw)
}

// rawTuple is what a tuple is built from, gathered under the read lock and
// decoded after it is released.
type rawTuple struct {
	thread, ns string
	rec        *record
	values     []chanBlob
	writes     []*storedWrite
	sends      []*storedWrite // parent's ChannelTasks writes (v<4 migration)
}

type chanBlob struct {
	channel, version string
	blob
}

func (s *InMemorySaver) collectLocked(thread, ns string, n *namespace, rec *record) *rawTuple {
	raw := &rawTuple{thread: thread, ns: ns, rec: rec}
	if len(rec.versions) > 0 {
		raw.values = make([]chanBlob, 0, len(rec.versions))
		for ch, ver := range rec.versions {
			if b, ok := n.blobs[chanVersion{ch, ver}]; ok && b.typ != serde.TypeEmpty {
				raw.values = append(raw.values, chanBlob{ch, ver, b})
			}
		}
	}
	if ws := n.writes[rec.id]; len(ws) > 0 {
		raw.writes = slices.SortedFunc(maps.Values(ws), func(a, b *storedWrite) int {
			return cmp.Or(cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx))
		})
	}
	if rec.v < 4 && rec.parent != "" {
		for _, w := range n.writes[rec.parent] {
			if w.channel == checkpointer.ChannelTasks {
				raw.sends = append(raw.sends, w)
			}
		}
		slices.SortFunc(raw.sends, func(a, b *storedWrite) int {
			return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.task, b.task), cmp.Compare(a.idx, b.idx))
		})
	}
	return raw
}

// decode hands the raw tuple to the core's reader, which opens every value
// where it was sealed.
func (s *InMemorySaver) decode(ctx context.Context, raw *rawTuple) (*checkpointer.Tuple, error) {
	rec := raw.rec
	st := &core.Stored{
		Thread: raw.thread, NS: raw.ns, ID: rec.id, Parent: rec.parent,
		Checkpoint: &core.DecodedCheckpoint{Checkpoint: &checkpointer.Checkpoint{
			V:               rec.v,
			ID:              rec.id,
			TS:              rec.ts,
			ChannelVersions: maps.Clone(rec.versions),
			VersionsSeen:    cloneSeen(rec.seen),
			UpdatedChannels: slices.Clone(rec.updated),
		}},
		Metadata: jsonvalue.Copy(rec.metadata).(map[string]any),
		Values:   make([]core.Value, len(raw.values)),
		Writes:   storedWrites(raw.writes),
		Sends:    storedWrites(raw.sends),
	}
	for i, b := range raw.values {
		st.Values[i] = core.Value{Channel: b.channel, Version: b.version, Type: b.typ, Data: b.data}
	}
	t, err := core.Reader{Codec: s.codec, Style: s.style}.Tuple(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	return t, nil
}

func storedWrites(ws []*storedWrite) []core.StoredWrite {
	if len(ws) == 0 {
		return nil
	}
	out := make([]core.StoredWrite, len(ws))
	for i, w := range ws {
		out[i] = core.StoredWrite{Task: w.task, Idx: w.idx, Channel: w.channel, Type: w.value.typ, Data: w.value.data}
	}
	return out
}

// List implements checkpointer.Saver. The ids that match are taken under
// the read lock when iteration starts; each tuple is loaded when the
// consumer reaches it, and skipped if it was deleted in between.
func (s *InMemorySaver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	return func(yield func(*checkpointer.Tuple, error) bool) {
		if err := checks.ValidateListConfig(cfg, opt); err != nil {
			yield(nil, fmt.Errorf("memory: list: %w", err))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(nil, fmt.Errorf("memory: %w", err))
			return
		}
		refs := s.match(cfg, opt)
		for _, r := range refs {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("memory: %w", err))
				return
			}
			s.mu.RLock()
			var raw *rawTuple
			if n := s.threads[r.thread][r.ns]; n != nil && n.checkpoints[r.rec.id] == r.rec {
				raw = s.collectLocked(r.thread, r.ns, n, r.rec)
			}
			s.mu.RUnlock()
			if raw == nil {
				continue
			}
			t, err := s.decode(ctx, raw)
			if !yield(t, err) || err != nil {
				return
			}
		}
	}
}

type ref struct {
	thread, ns string
	rec        *record
}

// match returns the records List yields, newest first, limit applied.
func (s *InMemorySaver) match(cfg *checkpointer.Config, opt checkpointer.ListOptions) []ref {
	before := ""
	if opt.Before != nil {
		before = opt.Before.CheckpointID
	}
	var refs []ref
	visit := func(thread, ns string, n *namespace) {
		add := func(rec *record) bool {
			if before != "" && rec.id >= before {
				return false
			}
			if len(opt.Filter) > 0 && !core.MetadataContains(rec.metadata, opt.Filter) {
				return false
			}
			refs = append(refs, ref{thread, ns, rec})
			return true
		}
		if cfg != nil && cfg.CheckpointID != "" {
			if rec := n.checkpoints[cfg.CheckpointID]; rec != nil {
				add(rec)
			}
			return
		}
		// Newest first from before; with a limit, no namespace needs to
		// give more than limit tuples.
		end := len(n.ids)
		if before != "" {
			end, _ = slices.BinarySearch(n.ids, before)
		}
		found := 0
		for i := end - 1; i >= 0; i-- {
			if add(n.checkpoints[n.ids[i]]) {
				found++
				if opt.Limit > 0 && found == opt.Limit {
					return
				}
			}
		}
	}
	visitThread := func(thread string, t map[string]*namespace) {
		if cfg != nil && !opt.AllNamespaces {
			if n := t[cfg.CheckpointNS]; n != nil {
				visit(thread, cfg.CheckpointNS, n)
			}
			return
		}
		for ns, n := range t {
			visit(thread, ns, n)
		}
	}

	s.mu.RLock()
	if cfg == nil || cfg.ThreadID == "" {
		for thread, t := range s.threads {
			visitThread(thread, t)
		}
	} else if t := s.threads[cfg.ThreadID]; t != nil {
		visitThread(cfg.ThreadID, t)
	}
	s.mu.RUnlock()

	slices.SortFunc(refs, func(a, b ref) int {
		return cmp.Or(cmp.Compare(b.rec.id, a.rec.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns))
	})
	if opt.Limit > 0 && len(refs) > opt.Limit {
		refs = refs[:opt.Limit]
	}
	return refs
}

// deleteThread is the core's DeleteThread hook (core.Hooks).
func (s *InMemorySaver) deleteThread(_ context.Context, threadID string) error {
	s.mu.Lock()
	delete(s.threads, threadID)
	s.mu.Unlock()
	return nil
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
