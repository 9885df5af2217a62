package audit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/reencrypt"
)

// Subjects tells the audit trail whose data a thread or namespace holds and
// which key seals it; keys.Hierarchy implements it. nil records no
// subjects.
type Subjects interface {
	ThreadSubject(ctx context.Context, thread string) (string, error)
	NamespaceSubject(ns string) string
	// CurrentKeyID is the id of the key that seals subject's values now
	// ("" for the master key's values: the master key's id). Subjects
	// that also have SubjectKeyID (keys.Hierarchy) are asked that
	// instead (keyID).
	CurrentKeyID(subject string) string
}

// subjectKeyIDs is implemented by Subjects whose subjects' keys may not be
// cached when a record is made (keys.Hierarchy): SubjectKeyID reads them
// then, and with create makes a subject's first key.
type subjectKeyIDs interface {
	SubjectKeyID(ctx context.Context, subject string, create bool) (string, error)
}

// keyID is the id of the key sealing owner's values, for a record. A
// write's record (seal) is made before the write seals anything: the
// first write of a subject would make the subject's first key only then,
// so the key is made here, as the write would make it (a write that then
// fails leaves a key that seals nothing, as one failing after sealing
// did). Before, the record of a subject's first write, and of any
// operation on a subject whose keys the process had not cached, named
// no key (CurrentKeyID reads no table).
func keyID(ctx context.Context, subjects Subjects, owner string, seal bool) (string, error) {
	k, ok := subjects.(subjectKeyIDs)
	if !ok {
		return subjects.CurrentKeyID(owner), nil
	}
	id, err := k.SubjectKeyID(ctx, owner, seal)
	if err != nil {
		return "", fmt.Errorf("audit: the subject's key: %w", err) // the keys error names the subject
	}
	return id, nil
}

// sealsFor reports whether op's record is made before a write that seals
// values under the key it names (keyID's seal).
func sealsFor(op string) bool {
	return op == OpCheckpointWrite || op == OpWritesWrite || op == OpItemWrite
}

// Saver is a checkpointer whose every read, write and delete is recorded in
// a trail before the result is returned. A record that cannot be written
// fails the operation: nothing is changed unaudited (a write waits for its
// record), and nothing read is returned unaudited (GetTuple reads while its
// record commits, and drops what it read when the record fails). NewSaver
// returns it with exactly the optional checkpointer interfaces of the saver
// it wraps.
type Saver struct {
	inner    checkpointer.Saver
	trail    *Trail
	subjects Subjects

	closeOnce sync.Once
	closeErr  error // what the first Close returned
}

var _ checkpointer.Saver = (*Saver)(nil)

// NewSaver returns inner audited in trail: a *Saver, with those of the
// optional checkpointer interfaces (ThreadLister, Pruner, Copier,
// CheckpointDeleter, RunDeleter, Reencrypter, ThreadImporter, Sweeper) that
// inner implements, and no other. A caller that looks for one (a type
// assertion) must find it exactly when the audited saver can do it, to
// fall back otherwise instead of failing.
func NewSaver(inner checkpointer.Saver, trail *Trail, subjects Subjects) checkpointer.Saver {
	return wrapSaver(&Saver{inner: inner, trail: trail, subjects: subjects})
}

// Unwrap returns the saver Saver audits.
func (s *Saver) Unwrap() checkpointer.Saver { return s.inner }

func (s *Saver) log(ctx context.Context, op, thread string) error {
	e, err := s.entry(ctx, op, thread)
	if err != nil {
		return err
	}
	return s.trail.LogAll(ctx, []Entry{e})
}

// recordRead records e, a read's: as a pending record committed by
// itself when the trail keeps them (Trail.recordRead: no trail lock, no
// chain append), else appended.
func (s *Saver) recordRead(ctx context.Context, e Entry) error {
	if ok, err := s.trail.recordRead(ctx, e); ok {
		return err
	}
	return s.trail.LogAll(ctx, []Entry{e})
}

// readInTx runs read with e's record carried into the read's own
// transaction (checkpointer.WithReadRecord) when the inner saver inserts
// it so (checkpointer.ReadRecorder: one round trip and one commit for the
// read and its record, which commits before anything read is returned)
// and can is true: the read is the only audited read in flight
// (Trail.readers), and can hold what it reads until the commit. With
// several in flight, the readers' records share INSERTs instead
// (recordRead, readRecorded): one commit for up to maxBatch reads costs
// the server less per read than a commit each. handled is false when it
// cannot (the caller records the read another way); else err is read's,
// or the record's.
//
// The record is chained by the read itself when the trail can
// (Trail.chainedReadRow: a head this process appended is known), else a
// pending row the chainer links later. A chained row that finds its
// place taken (another appender got there since: nothing was stored)
// runs read again with a pending row.
func (s *Saver) readInTx(ctx context.Context, e Entry, can bool, read func(context.Context) error) (handled bool, err error) {
	if !can {
		return false, nil
	}
	if r, ok := s.inner.(checkpointer.ReadRecorder); !ok || !r.RecordsReadsInTx() {
		return false, nil
	}
	row, c, ok, err := s.trail.chainedReadRow(ctx, e)
	if ok {
		if err != nil {
			return true, err
		}
		err = read(checkpointer.WithReadRecord(ctx, row))
		if !c.done(err) {
			return true, err
		}
	}
	row, ok, err = s.trail.RecordInTx(ctx, e)
	if !ok {
		return false, nil
	}
	defer s.trail.Recorded()
	if err != nil {
		return true, err
	}
	return true, read(checkpointer.WithReadRecord(ctx, row))
}

// entry is the record of op on thread, its subject and key resolved (a
// write's key made when the subject has none yet: keyID).
func (s *Saver) entry(ctx context.Context, op, thread string) (Entry, error) {
	return s.entrySealing(ctx, op, thread, sealsFor(op))
}

// entrySealing is entry, making the key (seal) or not.
func (s *Saver) entrySealing(ctx context.Context, op, thread string, seal bool) (Entry, error) {
	// A thread id no saver can hold fails as the saver would fail it
	// (checkpointer.ErrInvalidID), before anything is recorded: nothing
	// was read. So does an empty one (checkpointer.ErrMissingThreadID),
	// which every call naming one thread is refused for; a listing of
	// every thread is recorded as "*".
	check := checkpointer.ValidateThreadID
	if op == OpCheckpointList {
		check = func(id string) error { return checkpointer.ValidateText("thread id", id) }
	}
	if err := check(thread); err != nil {
		return Entry{}, err
	}
	e := Entry{Op: op, Target: thread}
	if s.subjects != nil {
		// A listing of every thread names no subject: its target "*" is
		// no thread, though a thread may be named "*" and bound to one
		// (ThreadMetadataKey), which would hide the listing from every
		// other subject's records (Filter.Subject).
		if op != OpCheckpointList {
			var err error
			if e.Subject, err = s.subjects.ThreadSubject(ctx, thread); err != nil {
				return Entry{}, err
			}
		}
		owner := e.Subject
		if tk, ok := s.subjects.(threadKeySubjects); ok && op != OpCheckpointList {
			// With subjects named in metadata a thread's values are
			// sealed under keys of its own, bound or not: naming the
			// master key (unbound) or the subject's key (bound) said
			// the wrong key sealed them (session 33).
			var err error
			if owner, err = tk.ThreadKeySubject(ctx, thread); err != nil {
				return Entry{}, err
			}
		}
		var err error
		if e.KeyID, err = keyID(ctx, s.subjects, owner, seal); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// threadKeySubjects is implemented by Subjects whose threads may be
// sealed under keys of their own (keys.Hierarchy: ThreadKeySubject names
// whose keys seal a thread's values).
type threadKeySubjects interface {
	ThreadKeySubject(ctx context.Context, thread string) (string, error)
}

// metadataSubject names in e the subject md names, when subjects come
// from checkpoint metadata (keys.Subjects.ThreadMetadataKey) and the
// thread is bound to none yet: the put that names the subject binds the
// thread to it (and hands it what the thread wrote before), so it is a
// write of the subject's data. Before, it was recorded with no subject
// and `audit show --subject` left it out. A name the key table would
// refuse is left out: the put fails.
func (s *Saver) metadataSubject(e *Entry, md checkpointer.Metadata) {
	hs, ok := s.subjects.(interface{ Subjects() keys.Subjects })
	if !ok || e.Subject != "" {
		return
	}
	sub := hs.Subjects()
	if name := sub.MetadataSubject(md); name != "" && sub.CheckSubject(name) == nil {
		e.Subject = name // the thread's own keys seal it still (entry's KeyID)
	}
}

// logAll records op on each thread in one append.
func (s *Saver) logAll(ctx context.Context, ops ...[2]string) error {
	es := make([]Entry, 0, len(ops))
	for _, o := range ops {
		e, err := s.entry(ctx, o[0], o[1])
		if err != nil {
			return err
		}
		es = append(es, e)
	}
	return s.trail.LogAll(ctx, es)
}

// GetTuple implements checkpointer.Saver (recorded as a read: alone in
// flight on a saver that can, in the read's own statement and commit
// (readInTx); else while the read runs. The tuple is returned once its
// record is durable, and not when the record fails).
func (s *Saver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	e, err := s.entry(ctx, OpCheckpointRead, cfg.ThreadID)
	if err != nil {
		return nil, err
	}
	alone := s.trail.readers.Add(1) == 1
	defer s.trail.readers.Add(-1)
	var tup *checkpointer.Tuple
	if handled, err := s.readInTx(ctx, e, alone, func(ctx context.Context) (err error) {
		tup, err = s.inner.GetTuple(ctx, cfg)
		return err
	}); handled {
		if err != nil {
			return nil, err
		}
		return tup, nil
	}
	return readRecorded(ctx, s.trail, e, func(ctx context.Context) (*checkpointer.Tuple, error) { return s.inner.GetTuple(ctx, cfg) })
}

// List implements checkpointer.Saver: one read record per thread listed
// (all threads: checkpoint.list of "*"), durable before the listing
// yields anything; when the record fails, the listing yields its error
// and nothing else. Alone in flight, a listing of at most
// checkpointer.MaxRecordedScan checkpoints on a saver that can carries
// its record in its query's transaction (readInTx): the saver holds the
// page until that committed, and holds no connection while it yields.
// Otherwise the record commits before the listing begins, not while the
// listing reads, as GetTuple's: a listing holds its connection as it
// yields, and waiting there for a record that commits through the same
// pool deadlocked once the listings in flight held every connection
// (TestAuditedListsPoolSize). A read record is one INSERT shared with the
// other reads in flight, so the cost is its commit's latency, not CPU.
func (s *Saver) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	op, thread := OpCheckpointList, "*"
	if cfg != nil && !opt.AllThreads {
		op, thread = OpCheckpointRead, cfg.ThreadID
	}
	return func(yield func(*checkpointer.Tuple, error) bool) {
		e, err := s.entry(ctx, op, thread)
		if err != nil {
			yield(nil, err)
			return
		}
		// A listing of a page small enough to hold until its record's
		// commit may carry the record (readInTx): the inner saver
		// yields nothing before the transaction holding both committed,
		// so an error before its first row (a chained record that found
		// its place taken among them) leaves nothing yielded, and
		// readInTx may run it again.
		alone := s.trail.readers.Add(1) == 1
		defer s.trail.readers.Add(-1)
		handled, err := s.readInTx(ctx, e, alone && opt.Limit > 0 && opt.Limit <= checkpointer.MaxRecordedScan, func(ctx context.Context) error {
			first := true
			for t, err := range s.inner.List(ctx, cfg, opt) {
				if err != nil && first {
					return err
				}
				first = false
				if !yield(t, err) {
					return nil
				}
			}
			return nil
		})
		if handled {
			if err != nil {
				yield(nil, err)
			}
			return
		}
		if err := s.recordRead(ctx, e); err != nil {
			yield(nil, err)
			return
		}
		for t, err := range s.inner.List(ctx, cfg, opt) {
			if !yield(t, err) {
				return
			}
		}
	}
}

// Put implements checkpointer.Saver (recorded as a write: in the put's own
// transaction when the trail can, see writeCtx).
func (s *Saver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) (checkpointer.Config, error) {
	e, err := s.entry(ctx, OpCheckpointWrite, cfg.ThreadID)
	if err != nil {
		return checkpointer.Config{}, err
	}
	s.metadataSubject(&e, md)
	wctx, inTx, err := s.recordCtx(ctx, e)
	if err != nil {
		return checkpointer.Config{}, err
	}
	out, err := s.inner.Put(wctx, cfg, cp, md, nv)
	if inTx {
		s.trail.Recorded() // even on error: a write whose commit was cut off may have committed
	}
	return out, err
}

// PutWrites implements checkpointer.Saver (recorded as a write, as Put).
func (s *Saver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	if len(writes) == 0 {
		// Nothing is written, so no transaction would carry the
		// record: it commits by itself, as it always did. Nothing is
		// sealed: the record makes no key (entrySealing).
		e, err := s.entrySealing(ctx, OpWritesWrite, cfg.ThreadID, false)
		if err != nil {
			return err
		}
		if err := s.trail.LogAll(ctx, []Entry{e}); err != nil {
			return err
		}
		return s.inner.PutWrites(ctx, cfg, writes, taskID, taskPath)
	}
	wctx, inTx, err := s.writeCtx(ctx, OpWritesWrite, cfg.ThreadID)
	if err != nil {
		return err
	}
	err = s.inner.PutWrites(wctx, cfg, writes, taskID, taskPath)
	if inTx {
		s.trail.Recorded() // even on error: a write whose commit was cut off may have committed
	}
	return err
}

// writeCtx records op on thread for a write about to run with the
// returned context. When the data lives in the trail's database
// (Options.WritesInTx) and the saver inserts records in its writes'
// transactions (checkpointer.TxRecorder), the context carries the record
// (inTx): the write and its record commit together, and a write that
// fails leaves no record. Otherwise the record commits first, as a change
// must not happen unless its record is durable.
func (s *Saver) writeCtx(ctx context.Context, op, thread string) (_ context.Context, inTx bool, _ error) {
	e, err := s.entry(ctx, op, thread)
	if err != nil {
		return nil, false, err
	}
	return s.recordCtx(ctx, e)
}

// recordCtx is writeCtx for the record e.
func (s *Saver) recordCtx(ctx context.Context, e Entry) (_ context.Context, inTx bool, _ error) {
	if r, ok := s.inner.(checkpointer.TxRecorder); ok && r.RecordsInTx() {
		row, ok, err := s.trail.RecordInTx(ctx, e)
		if err != nil {
			return nil, false, err
		}
		if ok {
			// A queued write (checkpointer/durable) commits its record
			// after Put returned, perhaps after the chaining run that
			// return armed: its commit arms another, so the record is
			// chained soon after it, not at the next Flush.
			if row != nil {
				row.Stored = s.trail.Recorded
			}
			return checkpointer.WithRecord(ctx, row), true, nil
		}
	}
	if err := s.trail.LogAll(ctx, []Entry{e}); err != nil {
		return nil, false, err
	}
	return ctx, false, nil
}

// DeleteThread implements checkpointer.Saver (recorded as a delete).
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := s.log(ctx, OpThreadDelete, threadID); err != nil {
		return err
	}
	return s.inner.DeleteThread(ctx, threadID)
}

// NextVersion implements checkpointer.Saver.
func (s *Saver) NextVersion(current string) string { return s.inner.NextVersion(current) }

// unsupported is the error of an optional method inner lacks (which the
// value NewSaver or NewStore returns does not have: unreachable).
func unsupported(inner any, what string) error {
	return fmt.Errorf("audit: %T cannot %s: %w", inner, what, errors.ErrUnsupported)
}

// listThreads implements checkpointer.ThreadLister; it decrypts nothing and
// is not recorded.
func (s *Saver) listThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	l, ok := s.inner.(checkpointer.ThreadLister)
	if !ok {
		return func(yield func(checkpointer.ThreadInfo, error) bool) {
			yield(checkpointer.ThreadInfo{}, unsupported(s.inner, "list threads"))
		}
	}
	return l.ListThreads(ctx)
}

// prune implements checkpointer.Pruner (a delete record per thread).
func (s *Saver) prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	p, ok := s.inner.(checkpointer.Pruner)
	if !ok {
		return unsupported(s.inner, "prune")
	}
	ops := make([][2]string, len(threadIDs))
	for i, id := range threadIDs {
		ops[i] = [2]string{OpThreadDelete, id}
	}
	if err := s.logAll(ctx, ops...); err != nil {
		return err
	}
	return p.Prune(ctx, threadIDs, strategy)
}

// copyThread implements checkpointer.Copier (a read and a write).
func (s *Saver) copyThread(ctx context.Context, src, dst string) error {
	c, ok := s.inner.(checkpointer.Copier)
	if !ok {
		return unsupported(s.inner, "copy threads")
	}
	if err := s.logAll(ctx, [2]string{OpCheckpointRead, src}, [2]string{OpCheckpointWrite, dst}); err != nil {
		return err
	}
	return c.CopyThread(ctx, src, dst)
}

// deleteCheckpoint implements checkpointer.CheckpointDeleter.
func (s *Saver) deleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	d, ok := s.inner.(checkpointer.CheckpointDeleter)
	if !ok {
		return unsupported(s.inner, "delete checkpoints")
	}
	if err := s.log(ctx, OpThreadDelete, cfg.ThreadID); err != nil {
		return err
	}
	return d.DeleteCheckpoint(ctx, cfg)
}

// deleteForRuns implements checkpointer.RunDeleter (one record, target
// "runs").
func (s *Saver) deleteForRuns(ctx context.Context, runIDs []string) error {
	d, ok := s.inner.(checkpointer.RunDeleter)
	if !ok {
		return unsupported(s.inner, "delete runs")
	}
	if err := s.trail.Log(ctx, OpThreadDelete, fmt.Sprintf("runs:%d", len(runIDs)), "", ""); err != nil {
		return err
	}
	return d.DeleteForRuns(ctx, runIDs)
}

// sweep implements checkpointer.Sweeper: a sweep that may delete is one
// record, target "retention:" and the policy (which threads it removed is
// not known before it runs, and recording each would decrypt nothing but
// cost a row per thread); a dry run deletes nothing and is not recorded.
func (s *Saver) sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	sw, ok := s.inner.(checkpointer.Sweeper)
	if !ok {
		return checkpointer.SweepReport{}, unsupported(s.inner, "sweep")
	}
	if !opt.DryRun && !policy.Empty() && policy.Validate() == nil {
		if err := s.trail.Log(ctx, OpThreadDelete, "retention:"+policy.String(), "", ""); err != nil {
			return checkpointer.SweepReport{}, err
		}
	}
	return sw.Sweep(ctx, policy, opt)
}

// reencrypt implements checkpointer.Reencrypter.
func (s *Saver) reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	r, ok := s.inner.(checkpointer.Reencrypter)
	if !ok {
		return reencrypt.Stats{}, unsupported(s.inner, "re-encrypt")
	}
	if err := s.trail.Log(ctx, OpReencrypt, "checkpoints", "", ""); err != nil {
		return reencrypt.Stats{}, err
	}
	return r.Reencrypt(ctx, opt)
}

// importThread implements checkpointer.ThreadImporter (a write).
func (s *Saver) importThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	im, ok := s.inner.(checkpointer.ThreadImporter)
	if !ok {
		return unsupported(s.inner, "import threads")
	}
	// One write record per thread the items name, all in one append: an
	// import may hold several threads' checkpoints (recording only the
	// first thread's left the others' writes out of the trail).
	// A thread bound to no subject yet whose items' metadata names one
	// becomes hers by the import, as by Put (metadataSubject).
	var es []Entry
	at := map[string]int{}
	for _, it := range items {
		i, ok := at[it.ThreadID]
		if !ok {
			e, err := s.entry(ctx, OpCheckpointWrite, it.ThreadID)
			if err != nil {
				return err
			}
			i = len(es)
			at[it.ThreadID] = i
			es = append(es, e)
		}
		s.metadataSubject(&es[i], it.Metadata)
	}
	if len(es) > 0 {
		if err := s.trail.LogAll(ctx, es); err != nil {
			return err
		}
	}
	return im.ImportThread(ctx, items)
}

// Close chains the records still pending (writes recorded in their own
// transactions), so that a process that shuts down cleanly leaves none
// for the next one, and closes the wrapped saver when it can be closed.
// A wrapped saver that queues writes (checkpointer/durable: a Flush
// method) writes its queues first, with the records they carry; its
// writes' errors are returned with the rest.
//
// The wrapped saver is closed before the trail's last chaining run: its
// Close may still commit records — durable's writes what was queued after
// its Flush, a put another goroutine made while Close ran — and those are
// chained too (before session 39 the trail was chained before the wrapped
// saver's Close, and such records stayed pending for the next process:
// TestAuditCloseChainsWritesCommittedByInnerClose). The trail's table has
// a handle of its own, which the wrapped saver's Close leaves open (every
// memvault saver's does). A write put after the wrapped saver's Close
// began is refused by it (durable.ErrClosed) or written by it, so chained.
// A record committed once the trail's table is closed (closed before this
// saver) stays pending, as a killed process leaves it: the chaining run
// its commit armed (RecordRow.Stored) fails and its error is dropped, and
// the next process's first chaining run links it; a check of the trail
// (Trail.CheckRecords) counts it as pending until then
// (TestRecordCommittedAfterTrailClosedStaysPending).
//
// Close runs once: a later call returns what the first returned, as the
// store engine's and the SQLite handles' Close do (before, a second Close
// reached the closed decorator and failed with its ErrClosed).
func (s *Saver) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Saver) close() error {
	var qerr, cerr error
	if q, ok := s.inner.(interface{ Flush(context.Context) error }); ok {
		qerr = q.Flush(context.Background())
	}
	if c, ok := s.inner.(interface{ Close() error }); ok {
		cerr = c.Close()
	}
	return errors.Join(qerr, s.trail.Flush(context.Background()), cerr)
}
