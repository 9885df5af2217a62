package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/checks"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// Options configures a Saver. The zero value is ready to use.
type Options struct {
	// Serde encodes channel values and pending writes. Default:
	// serde.JSONPlus{}. A serde.BoundSerializer (such as an encrypting one)
	// is given the associated data of each value's location, the same on
	// every driver, so rows moved between backends with their ids keep
	// decrypting and rows moved anywhere else do not.
	Serde serde.Serializer
	// VersionStyle selects how NextVersion spells versions. Default:
	// checkpointer.VersionString (Python LangGraph's style). New refuses a
	// value that is not a VersionStyle constant
	// (checkpointer.ErrInvalidVersionStyle).
	VersionStyle checkpointer.VersionStyle
	// Retention, when not empty, is applied by a background goroutine
	// every SweepInterval until Close (see Sweep); New refuses a policy
	// with negative fields (checkpointer.ErrInvalidPolicy). Default: keep
	// everything, no goroutine.
	Retention checkpointer.RetentionPolicy
	// SweepInterval is how often the Retention policy runs: 0 means an
	// hour, a negative value never (call Sweep yourself).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
	// SweepBatch is the number of threads per sweep transaction when
	// SweepOptions.BatchThreads is 0; 0 means checkpointer.DefaultSweepBatch.
	SweepBatch int
	// GroupCommit, when 2 or more and the driver is a
	// checkpointer.GroupWriter, turns group commit on: a Put or PutWrites
	// arriving while another write commits waits, and is committed with
	// the others that arrived meanwhile — up to GroupCommit of them — in
	// one transaction (one commit), each failing or succeeding on its
	// own. A write with no commit in flight commits alone at once. 0 or 1:
	// every write commits alone.
	GroupCommit int
	// GroupCommitFlights is how many commits of group commit may be in
	// flight at once (0 means 1): a write arriving while fewer are
	// commits alone at once, one arriving while that many are waits for
	// the next group. More than one suits a driver whose writes run in
	// parallel (PostgreSQL's, on several connections); a SQLite file has
	// one writer.
	GroupCommitFlights int
}

// Saver is a checkpointer on a Driver. It is safe for concurrent use when
// its driver is.
type Saver struct {
	d       checkpointer.Driver
	name    string
	caps    checkpointer.DriverCapabilities
	serde   serde.Serializer
	codec   binding.Codec // serde, binding values to their location
	reader  core.Reader
	style   checkpointer.VersionStyle
	batch   int
	sweeper *checkpointer.BackgroundSweeper // nil without a retention policy
	front   *core.Front                     // argument checks of the management calls
	group   *committer                      // nil: every write commits alone
}

// Saver implements every saver interface, Reencrypter included (a thread
// at a time over the driver; a SQL saver replaces it with its own run,
// which re-seals rows in place and compacts the file).
var _ interface {
	checkpointer.Saver
	checkpointer.Reencrypter
	checkpointer.Pruner
	checkpointer.Copier
	checkpointer.RunDeleter
	checkpointer.CheckpointDeleter
	checkpointer.ThreadLister
	checkpointer.ThreadImporter
	checkpointer.Sweeper
} = (*Saver)(nil)

// New returns a Saver on d. Options are checked as every backend checks
// them: an unknown VersionStyle or a Retention policy with a negative
// field is refused. With a Retention policy a background sweeper starts;
// Close stops it.
func New(d checkpointer.Driver, opt Options) (*Saver, error) {
	if err := core.CheckOptions(d.Name(), opt.VersionStyle, opt.Retention); err != nil {
		return nil, err
	}
	if _, ok := d.(checkpointer.LatestKeeper); d.Capabilities().KeepLatest && !ok {
		return nil, fmt.Errorf("%s: the driver declares KeepLatest but is no checkpointer.LatestKeeper", d.Name())
	}
	s := newSaver(d, opt.Serde, opt.VersionStyle, opt.SweepBatch)
	s.group = newCommitter(d, opt.GroupCommit, opt.GroupCommitFlights)
	s.sweeper = checkpointer.StartSweeper(opt.Retention, opt.SweepInterval, s.Sweep, opt.OnSweep)
	return s, nil
}

func newSaver(d checkpointer.Driver, ser serde.Serializer, style checkpointer.VersionStyle, batch int) *Saver {
	if ser == nil {
		ser = serde.JSONPlus{}
	}
	codec := binding.New(ser)
	s := &Saver{d: d, name: d.Name(), caps: d.Capabilities(), serde: ser, codec: codec,
		reader: core.Reader{Codec: codec, Style: style}, style: style, batch: batch}
	s.front = s.newFront()
	return s
}

// WithSerde returns a Saver on the same driver that encodes and decodes
// with ser (nil means serde.JSONPlus{}), as a restarted process
// configured with another serializer would. It runs no sweeper; its
// writes go through this saver's group committer, if any (the rows a
// write hands it are sealed already, and one committer per driver keeps
// GroupCommitFlights a bound on the driver's commits).
func (s *Saver) WithSerde(ser serde.Serializer) *Saver {
	e := newSaver(s.d, ser, s.style, s.batch)
	e.group = s.group
	return e
}

// On returns a Saver running on d — the same driver bound to a caller's
// transaction, say — with this one's serializer and options; it runs no
// sweeper and commits no groups: each write is d's own (a caller's
// transaction takes its writes one at a time, in it).
func (s *Saver) On(d checkpointer.Driver) *Saver {
	return newSaver(d, s.serde, s.style, s.batch)
}

// Serde returns the saver's serializer.
func (s *Saver) Serde() serde.Serializer { return s.serde }

// Close stops the background sweeper, if any, waiting for it to return.
// It does not close the driver.
func (s *Saver) Close() error {
	s.sweeper.Stop()
	return nil
}

func (s *Saver) wrap(err error) error { return fmt.Errorf("%s: %w", s.name, err) }

// NextVersion implements checkpointer.Saver.
func (s *Saver) NextVersion(current string) string {
	return core.NextVersionStyle(s.style, current)
}

// Put implements checkpointer.Saver. Values are serialized and sealed
// before the driver's write begins. A put that inherits values from its
// parent fails with checkpointer.ErrParentMissing, storing nothing, when
// the parent is no longer stored.
func (s *Saver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	p, err := s.putRows(ctx, cfg, cp, md, newVersions)
	if err != nil {
		return checkpointer.Config{}, s.wrap(err)
	}
	if p.Record, err = s.record(ctx); err != nil {
		return checkpointer.Config{}, s.wrap(err)
	}
	if err := s.put(ctx, p); err != nil {
		return checkpointer.Config{}, s.wrap(err)
	}
	return checkpointer.Config{ThreadID: p.Thread, CheckpointNS: p.NS, CheckpointID: p.ID}, nil
}

func (s *Saver) putRows(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (*checkpointer.PutRows, error) {
	if cp != nil && cp.V == 0 {
		// A Go caller's unset V is the current format (what
		// core.ReadsParentSends assumes): it is stored as 4, never as
		// "v": 0, which every reader — Python's too — takes as a format
		// before 4 that reads its parent's __pregel_tasks writes as
		// pending sends. The caller's checkpoint is not modified.
		current := *cp
		current.V = core.CurrentV
		cp = &current
	}
	r, err := core.Put(ctx, s.codec, s.style, cfg, cp, md, newVersions, !s.caps.DecodedDocuments)
	if err != nil {
		return nil, err
	}
	p := &checkpointer.PutRows{Thread: r.Thread, NS: r.NS, ID: r.ID, Parent: r.Parent, NeedsParent: r.NeedsParent,
		V: cp.V, Versions: cp.ChannelVersions, Checkpoint: cp, Doc: r.Doc, Meta: r.Meta, Values: r.Blobs, Fence: r.WriteFence(s.codec)}
	if s.caps.InlineParentValues && r.Parent != "" {
		// Python LangGraph keeps primitive values inline in its
		// documents: a put continuing one of its checkpoints would lose
		// the unchanged ones, so they are sent sealed, for the driver to
		// store where the parent holds them inline.
		for _, ch := range slices.Sorted(maps.Keys(cp.ChannelValues)) {
			val := cp.ChannelValues[ch]
			if _, isNew := newVersions[ch]; isNew || cp.ChannelVersions[ch] == "" || !primitive(val) {
				continue
			}
			b, err := core.SealBlob(ctx, s.codec, r.Thread, r.NS, ch, cp.ChannelVersions[ch], cp.ChannelValues, &r.Fence)
			if err != nil {
				return nil, err
			}
			p.Inline = append(p.Inline, b)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// primitive reports whether Python LangGraph would keep v inline in the
// checkpoint document (None, str, int, float, bool).
func primitive(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
		return true
	}
	return false
}

// PutWrites implements checkpointer.Saver.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	w, err := s.writeRows(ctx, cfg, writes, taskID, taskPath)
	if err != nil || w == nil {
		if err != nil {
			err = s.wrap(err)
		}
		return err
	}
	if w.Record, err = s.record(ctx); err != nil {
		return s.wrap(err)
	}
	if err := s.putWrites(ctx, w); err != nil {
		return s.wrap(err)
	}
	return nil
}

// RecordsInTx implements checkpointer.TxRecorder: a Put or PutWrites
// whose context carries an audit record (checkpointer.WithRecord) inserts
// it in the write's transaction when the driver can.
func (s *Saver) RecordsInTx() bool { return s.caps.TxRecords }

// RecordsReadsInTx implements checkpointer.ReadRecorder: a GetTuple or
// List whose context carries an audit record (checkpointer.WithReadRecord)
// inserts it in the read's own transaction when the driver has
// ReadRecords; on another driver such a read is refused.
func (s *Saver) RecordsReadsInTx() bool { return s.caps.ReadRecords }

// readRecordCheck fails a read whose context carries an audit record the
// driver cannot insert in the read's transaction (nothing may be read
// unrecorded).
func (s *Saver) readRecordCheck(ctx context.Context) error {
	if checkpointer.ReadRecordOf(ctx) != nil && !s.caps.ReadRecords {
		return fmt.Errorf("the read carries an audit record, which this driver cannot insert in its transaction: %w", errors.ErrUnsupported)
	}
	return nil
}

// record is the audit record ctx carries for the write, nil for none; an
// error when the driver cannot insert it in the write's transaction (the
// write must not happen unrecorded).
func (s *Saver) record(ctx context.Context) (*checkpointer.RecordRow, error) {
	r := checkpointer.RecordOf(ctx)
	if r != nil && !s.caps.TxRecords {
		return nil, fmt.Errorf("the write carries an audit record, which this driver cannot insert in its transaction: %w", errors.ErrUnsupported)
	}
	return r, nil
}

// writeRows prepares a PutWrites; nil, nil for no writes.
func (s *Saver) writeRows(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) (*checkpointer.WriteRows, error) {
	w, err := core.PutWrites(ctx, s.codec, cfg, writes, taskID, taskPath)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, nil
	}
	for i := range w.Rows {
		w.Rows[i].Task, w.Rows[i].Path = w.Task, w.TaskPath
	}
	return &checkpointer.WriteRows{Thread: w.Thread, NS: w.NS, Checkpoint: w.Checkpoint, Task: w.Task, Path: w.TaskPath,
		Rows: w.Rows, Upsert: w.Upsert, Fence: w.WriteFence(s.codec)}, nil
}

// GetTuple implements checkpointer.Saver.
func (s *Saver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	if err := checks.ValidateConfig(cfg); err != nil {
		return nil, s.wrap(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap(err)
	}
	if err := s.readRecordCheck(ctx); err != nil {
		return nil, s.wrap(err)
	}
	st, err := s.d.Load(ctx, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
	if err != nil || st == nil {
		if err != nil {
			err = s.wrap(err)
		}
		return nil, err
	}
	md, err := metadata(st)
	if err != nil {
		return nil, s.wrap(fmt.Errorf("checkpoint %q: %w", st.ID, err))
	}
	return s.tuple(ctx, st, md)
}

// metadata is st's metadata, decoded.
func metadata(st *checkpointer.StoredCheckpoint) (map[string]any, error) {
	if st.Metadata != nil {
		return st.Metadata, nil
	}
	return core.DecodeMetadata(st.Meta)
}

// tuple opens st, whose metadata md is decoded.
func (s *Saver) tuple(ctx context.Context, st *checkpointer.StoredCheckpoint, md map[string]any) (*checkpointer.Tuple, error) {
	var doc *core.DecodedCheckpoint
	if d, ok := st.Decoded.(*Document); ok && d != nil {
		doc = d.dec
	} else {
		var err error
		if doc, err = core.DecodeCheckpointJSON(st.Doc); err != nil {
			return nil, s.wrap(fmt.Errorf("checkpoint %q: %w", st.ID, err))
		}
	}
	t, err := s.reader.Tuple(ctx, &core.Stored{Thread: st.Thread, NS: st.NS, ID: st.ID, Parent: st.Parent,
		Checkpoint: doc, Metadata: md, Values: st.Values, Writes: st.Writes, Sends: st.Sends})
	if err != nil {
		return nil, s.wrap(err)
	}
	return t, nil
}

// List implements checkpointer.Saver: newest first, streamed from the
// driver; the metadata filter is checked here unless the driver declares
// ExactFilter.
func (s *Saver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	return func(yield func(*checkpointer.Tuple, error) bool) {
		if err := checks.ValidateListConfig(cfg, opt); err != nil {
			yield(nil, s.wrap(fmt.Errorf("list: %w", err)))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(nil, s.wrap(err))
			return
		}
		if err := s.readRecordCheck(ctx); err != nil {
			yield(nil, s.wrap(err))
			return
		}
		q := ListQuery(cfg, opt)
		filterHere := len(opt.Filter) > 0 && !s.caps.ExactFilter
		if filterHere {
			q.Limit = 0
		}
		n := 0
		for st, err := range s.d.Scan(ctx, q) {
			if err != nil {
				yield(nil, s.wrap(err))
				return
			}
			md, err := metadata(st)
			if err != nil {
				yield(nil, s.wrap(fmt.Errorf("checkpoint %q: %w", st.ID, err)))
				return
			}
			if filterHere && !core.MetadataContains(md, opt.Filter) {
				continue
			}
			t, err := s.tuple(ctx, st, md)
			if !yield(t, err) || err != nil {
				return
			}
			if n++; opt.Limit > 0 && n >= opt.Limit {
				return
			}
		}
	}
}

// ListQuery is the DriverQuery of a List call: cfg's thread, namespace
// (unless opt.AllNamespaces) and checkpoint, opt's Before, Filter and
// Limit. The engine withholds the Limit from a driver whose filter is not
// exact.
func ListQuery(cfg *checkpointer.Config, opt checkpointer.ListOptions) checkpointer.DriverQuery {
	var q checkpointer.DriverQuery
	if cfg != nil {
		q.Thread, q.ID = cfg.ThreadID, cfg.CheckpointID
		if !opt.AllNamespaces {
			ns := cfg.CheckpointNS
			q.NS = &ns
		}
	}
	if opt.Before != nil {
		q.Before = opt.Before.CheckpointID
	}
	q.Filter, q.Limit = opt.Filter, opt.Limit
	return q
}

// ListThreads implements checkpointer.ThreadLister; no value is opened.
func (s *Saver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(checkpointer.ThreadInfo{}, s.wrap(err))
			return
		}
		for ti, err := range s.d.ThreadInfos(ctx) {
			if err != nil {
				yield(ti, s.wrap(err))
				return
			}
			if !yield(ti, nil) {
				return
			}
		}
	}
}

// rowThreadsPage is how many thread ids RowThreadIDs reads a round trip.
const rowThreadsPage = 1000

// RowThreadIDs lists, ascending, every thread holding any row: a
// checkpoint, a channel value, or a pending write — a thread whose
// checkpoints a prune, retention or a crash removed, or never stored,
// and whose values or writes stay, included, which ListThreads (threads
// holding a checkpoint) misses. It reads rowThreadsPage ids a round trip
// from a driver that implements RowThreads (every driver of this
// module and the MongoDB and Redis ones); on another it yields only an
// error wrapping errors.ErrUnsupported. Forget uses it to find a subject's threads
// (vault), so that no row of an erased subject is left behind.
func (s *Saver) RowThreadIDs(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		rt, ok := s.d.(RowThreads)
		if !ok {
			yield("", s.wrap(fmt.Errorf("%w: the driver lists only threads holding a checkpoint (RowThreads)", errors.ErrUnsupported)))
			return
		}
		after := ""
		for {
			page, err := rt.RowThreads(ctx, after, rowThreadsPage)
			if err != nil {
				yield("", s.wrap(fmt.Errorf("list threads: %w", err)))
				return
			}
			for _, id := range page {
				if !yield(id, nil) {
					return
				}
			}
			if len(page) < rowThreadsPage {
				return
			}
			after = page[len(page)-1]
		}
	}
}
