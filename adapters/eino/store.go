package eino

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudwego/eino/compose"

	"github.com/memvault/memvault/checkpointer"
)

// channel is the checkpoint channel that holds Eino's serialized checkpoint.
const channel = "eino"

// Options configures a CheckPointStore. The zero value is usable.
type Options struct {
	// Namespace is the checkpoint namespace of Eino's threads; empty means
	// "eino", so that reads and History see only Eino's checkpoints.
	// Delete and Sweep remove a whole thread (every namespace): do not give
	// LangGraph-style threads of the same saver Eino's checkpoint ids.
	Namespace string
	// KeepLast, when positive, keeps only the newest KeepLast checkpoints of
	// an id after each Set (the saver must be a
	// checkpointer.CheckpointDeleter, as every memvault saver is); 0 keeps
	// them all.
	KeepLast int
	// IdleTTL, when positive, is how long an id may go without a new
	// checkpoint before Sweep deletes it (the saver must be a
	// checkpointer.ThreadLister, as every memvault saver is); 0 keeps ids
	// until they are deleted.
	IdleTTL time.Duration
}

// CheckPointStore is an Eino checkpoint store on a memvault saver. It is
// safe for concurrent use as far as the saver is; Eino writes one id from
// one run at a time.
type CheckPointStore struct {
	saver checkpointer.Saver
	ns    string
	keep  int
	ttl   time.Duration
}

var _ compose.CheckPointStore = (*CheckPointStore)(nil)

// NewCheckPointStore returns the checkpoint store of saver.
func NewCheckPointStore(saver checkpointer.Saver, opts Options) (*CheckPointStore, error) {
	if saver == nil {
		return nil, errors.New("eino: nil saver")
	}
	if opts.KeepLast < 0 {
		return nil, fmt.Errorf("eino: negative KeepLast %d", opts.KeepLast)
	}
	if opts.KeepLast > 0 {
		if _, ok := saver.(checkpointer.CheckpointDeleter); !ok {
			return nil, fmt.Errorf("eino: KeepLast needs a saver that deletes checkpoints, not %T", saver)
		}
	}
	if opts.IdleTTL < 0 {
		return nil, fmt.Errorf("eino: negative IdleTTL %v", opts.IdleTTL)
	}
	if opts.IdleTTL > 0 {
		if _, ok := saver.(checkpointer.ThreadLister); !ok {
			return nil, fmt.Errorf("eino: IdleTTL needs a saver that lists threads, not %T", saver)
		}
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "eino"
	}
	return &CheckPointStore{saver: saver, ns: ns, keep: opts.KeepLast, ttl: opts.IdleTTL}, nil
}

// idName names an Eino checkpoint id in an error: quoted, or by its length
// when it is over the identifier limit (checkpointer.NameID), since a
// caller's id of any length reaches these errors.
func idName(id string) string { return checkpointer.NameID("checkpoint id", id) }

func (s *CheckPointStore) config(id string) checkpointer.Config {
	return checkpointer.Config{ThreadID: id, CheckpointNS: s.ns}
}

// Get implements compose.CheckPointStore: the latest checkpoint of id.
func (s *CheckPointStore) Get(ctx context.Context, checkPointID string) ([]byte, bool, error) {
	t, err := s.saver.GetTuple(ctx, s.config(checkPointID))
	if err != nil {
		return nil, false, fmt.Errorf("eino: get %s: %w", idName(checkPointID), err)
	}
	if t == nil {
		return nil, false, nil
	}
	b, err := payload(t)
	return b, err == nil, err
}

func payload(t *checkpointer.Tuple) ([]byte, error) {
	b, ok := t.Checkpoint.ChannelValues[channel].([]byte)
	if !ok {
		return nil, fmt.Errorf("eino: checkpoint %s holds no Eino checkpoint", t.Config.CheckpointID)
	}
	return b, nil
}

// Set implements compose.CheckPointStore: data becomes a new checkpoint of
// id, the child of the latest; with KeepLast, older ones beyond it go.
func (s *CheckPointStore) Set(ctx context.Context, checkPointID string, data []byte) error {
	cfg := s.config(checkPointID)
	prev, err := s.saver.GetTuple(ctx, cfg)
	if err != nil {
		return fmt.Errorf("eino: set %s: %w", idName(checkPointID), err)
	}
	step, version := 0, ""
	if prev != nil {
		cfg = prev.Config
		version = prev.Checkpoint.ChannelVersions[channel]
		if n, ok := prev.Metadata["step"].(int64); ok {
			step = int(n) + 1
		}
	}
	version = s.saver.NextVersion(version)
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
		ChannelValues:   map[string]any{channel: data},
		ChannelVersions: map[string]string{channel: version},
	}
	md := checkpointer.Metadata{"source": "eino", "step": step}
	if _, err := s.saver.Put(ctx, cfg, cp, md, cp.ChannelVersions); err != nil {
		return fmt.Errorf("eino: set %s: %w", idName(checkPointID), err)
	}
	if s.keep > 0 {
		return s.trim(ctx, checkPointID)
	}
	return nil
}

// trim deletes the checkpoints of id older than the newest KeepLast.
func (s *CheckPointStore) trim(ctx context.Context, id string) error {
	del := s.saver.(checkpointer.CheckpointDeleter)
	cfg := s.config(id)
	var old []checkpointer.Config
	n := 0
	for t, err := range s.saver.List(ctx, &cfg, checkpointer.ListOptions{}) {
		if err != nil {
			return fmt.Errorf("eino: trim %s: %w", idName(id), err)
		}
		if n++; n > s.keep {
			old = append(old, t.Config)
		}
	}
	for _, c := range old {
		if err := del.DeleteCheckpoint(ctx, c); err != nil {
			return fmt.Errorf("eino: trim %s: %w", idName(id), err)
		}
	}
	return nil
}

// Delete implements Eino's CheckPointDeleter: every checkpoint of id goes.
func (s *CheckPointStore) Delete(ctx context.Context, checkPointID string) error {
	if err := s.saver.DeleteThread(ctx, checkPointID); err != nil {
		return fmt.Errorf("eino: delete %s: %w", idName(checkPointID), err)
	}
	return nil
}

// Sweep deletes every id whose newest checkpoint (in any namespace) is
// older than Options.IdleTTL and that holds an Eino checkpoint, and returns
// how many it deleted; with no IdleTTL it deletes nothing. Run it from a
// ticker or a cron job. Threads are found in one listing query, without
// decrypting anything; each stale one costs a read, and they are deleted
// together.
func (s *CheckPointStore) Sweep(ctx context.Context) (int, error) {
	if s.ttl <= 0 {
		return 0, nil
	}
	cutoff := time.Now().Add(-s.ttl)
	// Gather first, delete after: the listing streams rows, and an embedded
	// database's single connection must not be asked to delete under it.
	var stale []string
	for th, err := range s.saver.(checkpointer.ThreadLister).ListThreads(ctx) {
		if err != nil {
			return 0, fmt.Errorf("eino: sweep: %w", err)
		}
		if at, ok := checkpointer.IDTime(th.LatestCheckpointID); ok && at.Before(cutoff) {
			stale = append(stale, th.ThreadID)
		}
	}
	var ids []string
	for _, id := range stale {
		t, err := s.saver.GetTuple(ctx, s.config(id))
		if err != nil {
			return 0, fmt.Errorf("eino: sweep %s: %w", idName(id), err)
		}
		if t != nil { // Eino's, not another thread of the saver
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	// One set-based delete where the saver prunes (every memvault saver does).
	if p, ok := s.saver.(checkpointer.Pruner); ok {
		if err := p.Prune(ctx, ids, checkpointer.PruneDelete); err != nil {
			return 0, fmt.Errorf("eino: sweep: %w", err)
		}
		return len(ids), nil
	}
	for i, id := range ids {
		if err := s.saver.DeleteThread(ctx, id); err != nil {
			return i, fmt.Errorf("eino: sweep %s: %w", idName(id), err)
		}
	}
	return len(ids), nil
}

// Version is one stored checkpoint of an id.
type Version struct {
	// CheckpointID names it for Restore (memvault's checkpoint id).
	CheckpointID string
	// Time is when it was stored.
	Time time.Time
	// Data is Eino's serialized checkpoint.
	Data []byte
}

// History returns the checkpoints of id, newest first.
func (s *CheckPointStore) History(ctx context.Context, checkPointID string) ([]Version, error) {
	cfg := s.config(checkPointID)
	var out []Version
	for t, err := range s.saver.List(ctx, &cfg, checkpointer.ListOptions{}) {
		if err != nil {
			return nil, fmt.Errorf("eino: history of %q: %w", checkPointID, err)
		}
		b, err := payload(t)
		if err != nil {
			return nil, err
		}
		out = append(out, Version{CheckpointID: t.Config.CheckpointID, Time: t.Checkpoint.TS, Data: b})
	}
	return out, nil
}

// Restore makes an earlier checkpoint of id (a Version's CheckpointID) the
// latest again, as a new checkpoint: the next resume starts from it, and
// the history keeps everything in between.
func (s *CheckPointStore) Restore(ctx context.Context, checkPointID, version string) error {
	cfg := s.config(checkPointID)
	cfg.CheckpointID = version
	t, err := s.saver.GetTuple(ctx, cfg)
	if err != nil {
		return fmt.Errorf("eino: restore %s: %w", idName(checkPointID), err)
	}
	if t == nil {
		return fmt.Errorf("eino: restore %s: no %s", idName(checkPointID), checkpointer.NameID("checkpoint", version))
	}
	b, err := payload(t)
	if err != nil {
		return err
	}
	return s.Set(ctx, checkPointID, b)
}
