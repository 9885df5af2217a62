package audit

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
)

// Store is a store whose every read, search, write and delete is recorded
// in a trail before the result is returned; a record that cannot be
// written fails the operation. NewStore returns it with exactly the
// optional store interfaces of the store it wraps.
type Store struct {
	inner    store.Store
	trail    *Trail
	subjects Subjects
	// closed is set by Close: from then on every operation fails with
	// store.ErrClosed, recorded or not, also when inner has no Close.
	closed atomic.Bool
}

// errClosed is the error of an operation after Close.
var errClosed = fmt.Errorf("audit: %w", store.ErrClosed)

var _ store.Store = (*Store)(nil)

// NewStore returns inner audited in trail: a *Store, with those of the
// optional store interfaces (Lister, PrefixDeleter, ConditionalPutter,
// Reencrypter, Sweeper, Reembedder) that inner implements, and no other.
func NewStore(inner store.Store, trail *Trail, subjects Subjects) store.Store {
	return wrapStore(&Store{inner: inner, trail: trail, subjects: subjects})
}

// Unwrap returns the store Store audits.
func (s *Store) Unwrap() store.Store { return s.inner }

// RecordsReads reports true: every read is recorded before it is answered.
// A read-through cache (store/cache) over s therefore keeps nothing, since
// a hit would be a read without its record (cache.ReadRecorder).
func (s *Store) RecordsReads() bool { return true }

// EmbedderName implements store.EmbedderNamer with the audited store's
// answer ("", false when it cannot tell); naming the embedder reads no
// item, so nothing is recorded. It is always there (not one of the
// generated capabilities): its ok already says whether inner knows.
func (s *Store) EmbedderName() (string, bool) { return store.EmbedderNameOf(s.inner) }

func (s *Store) log(ctx context.Context, op string, ns store.Namespace, key string) error {
	e, err := s.entry(ctx, op, ns, key)
	if err != nil {
		return err
	}
	return s.trail.LogAll(ctx, []Entry{e})
}

// entry is the record of op on ns/key, its subject and key resolved (a
// write's key made when the subject has none yet: keyID). A namespace or
// key no store can hold fails as the store would fail it
// (store.ErrInvalidNamespace, store.ErrInvalidKey), before anything is
// recorded: nothing was read.
func (s *Store) entry(ctx context.Context, op string, ns store.Namespace, key string) (Entry, error) {
	if err := ns.ValidatePrefix(); err != nil {
		return Entry{}, err
	}
	if key != "" {
		if err := store.ValidateKey(key); err != nil {
			return Entry{}, err
		}
	}
	text := ns.String()
	e := Entry{Op: op, Target: text}
	if key != "" {
		e.Target += "/" + key
	}
	if s.subjects != nil {
		e.Subject = s.subjects.NamespaceSubject(text)
		var err error
		if e.KeyID, err = keyID(ctx, s.subjects, e.Subject, sealsFor(op)); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// Get implements store.Store: recorded as a read while the read runs;
// the item is returned once its record is durable, and not when the
// record fails (as Saver.GetTuple). Search and ListItems alike.
func (s *Store) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	e, err := s.entry(ctx, OpItemRead, ns, key)
	if err != nil {
		return nil, err
	}
	return readRecorded(ctx, s.trail, e, func(ctx context.Context) (*store.Item, error) { return s.inner.Get(ctx, ns, key, opts...) })
}

// Put implements store.Store (recorded as a write: in the put's own
// transaction when the trail can, see writeCtx). Delete and PutIf alike.
func (s *Store) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if s.closed.Load() {
		return errClosed
	}
	wctx, inTx, err := s.writeCtx(ctx, OpItemWrite, ns, key)
	if err != nil {
		return err
	}
	err = s.inner.Put(wctx, ns, key, value, opts...)
	if inTx {
		s.trail.Recorded() // even on error: a write whose commit was cut off may have committed
	}
	return err
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, ns store.Namespace, key string) error {
	if s.closed.Load() {
		return errClosed
	}
	wctx, inTx, err := s.writeCtx(ctx, OpItemDelete, ns, key)
	if err != nil {
		return err
	}
	err = s.inner.Delete(wctx, ns, key)
	if inTx {
		s.trail.Recorded() // even on error: a write whose commit was cut off may have committed
	}
	return err
}

// writeCtx records op on ns/key for a write about to run with the
// returned context, as Saver.writeCtx does: when the items live in the
// trail's database (Options.WritesInTx) and the store inserts records in
// its writes' transactions (store.TxRecorder), the context carries the
// record (inTx) and it commits with the write — one commit for both, and
// a write that fails (a conditional put whose condition does not hold)
// leaves none. Otherwise the record commits first.
func (s *Store) writeCtx(ctx context.Context, op string, ns store.Namespace, key string) (_ context.Context, inTx bool, _ error) {
	e, err := s.entry(ctx, op, ns, key)
	if err != nil {
		return nil, false, err
	}
	if r, ok := s.inner.(store.TxRecorder); ok && r.RecordsInTx() {
		row, ok, err := s.trail.RecordInTx(ctx, e)
		if err != nil {
			return nil, false, err
		}
		if ok {
			srow, err := storeRow(row)
			if err != nil {
				return nil, false, err
			}
			return store.WithRecord(ctx, srow), true, nil
		}
	}
	if err := s.trail.LogAll(ctx, []Entry{e}); err != nil {
		return nil, false, err
	}
	return ctx, false, nil
}

// Search implements store.Store: one record for the prefix searched, and
// when the results hold items of subjects that record does not name (a
// search of ("users") finds every user's), one more record of the same
// search for each of those subjects, durable before the results are
// returned (resultSubjects).
func (s *Store) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	e, err := s.entry(ctx, OpItemSearch, prefix, "")
	if err != nil {
		return nil, err
	}
	res, err := readRecorded(ctx, s.trail, e, func(ctx context.Context) ([]store.SearchItem, error) { return s.inner.Search(ctx, prefix, opt) })
	if err != nil {
		return nil, err
	}
	if err := s.resultSubjects(ctx, []Entry{e}, [][]store.SearchItem{res}); err != nil {
		return nil, err
	}
	return res, nil
}

// resultSubjects records, for reads whose records (es) name no subject or
// another one, a read of each subject whose items the results hold (one
// record per subject and search, es[i] for results[i]), and returns once
// they are durable: `audit show --subject carol` then lists every read
// that returned carol's data. Reads of one subject's space cost nothing
// more.
func (s *Store) resultSubjects(ctx context.Context, es []Entry, results [][]store.SearchItem) error {
	if s.subjects == nil {
		return nil
	}
	var more []Entry
	for i, e := range es {
		seen := map[string]bool{"": true, e.Subject: true}
		for _, it := range results[i] {
			sub := s.subjects.NamespaceSubject(it.Namespace.String())
			if seen[sub] {
				continue
			}
			seen[sub] = true
			id, err := keyID(ctx, s.subjects, sub, false)
			if err != nil {
				return err
			}
			more = append(more, Entry{Op: e.Op, Target: e.Target, Subject: sub, KeyID: id})
		}
	}
	if len(more) == 0 {
		return nil
	}
	return recordReads(ctx, s.trail, more)
}

// ListNamespaces implements store.Store; it decrypts nothing and is not
// recorded.
func (s *Store) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	return s.inner.ListNamespaces(ctx, opt)
}

// Batch implements store.Store: a record per operation. A batch that
// writes records in its own transaction when the trail can (see
// writeCtx): its records commit with it, and a batch that fails leaves
// none. A batch that only reads records as Get does (startReads).
// Otherwise the records are all appended at once, then the batch runs.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	res, searches, err := s.batch(ctx, ops)
	if err != nil {
		return nil, err
	}
	// A search op of the batch that returned other subjects' items is
	// recorded for each of them too, as Search is.
	var es []Entry
	var found [][]store.SearchItem
	for i, op := range ops {
		if _, ok := op.(store.SearchOp); ok && i < len(res) {
			es, found = append(es, searches[i]), append(found, res[i].Items)
		}
	}
	if err := s.resultSubjects(ctx, es, found); err != nil {
		return nil, err
	}
	return res, nil
}

// batch runs Batch's ops with their records; entries[i] is op i's record
// (zero for an op that has none).
func (s *Store) batch(ctx context.Context, ops []store.Op) (_ []store.Result, entries []Entry, _ error) {
	entries = make([]Entry, len(ops))
	es := make([]Entry, 0, len(ops))
	for i, op := range ops {
		var (
			e   Entry
			err error
		)
		switch o := op.(type) {
		case store.GetOp:
			e, err = s.entry(ctx, OpItemRead, o.Namespace, o.Key)
		case store.PutOp:
			if o.Value == nil {
				e, err = s.entry(ctx, OpItemDelete, o.Namespace, o.Key)
			} else {
				e, err = s.entry(ctx, OpItemWrite, o.Namespace, o.Key)
			}
		case store.SearchOp:
			e, err = s.entry(ctx, OpItemSearch, o.Prefix, "")
		default:
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		entries[i] = e
		es = append(es, e)
	}
	if r, ok := s.inner.(store.TxRecorder); ok && r.RecordsInTx() && batchWrites(ops) {
		rows := make([]*store.RecordRow, 0, len(es))
		for _, e := range es {
			row, ok, err := s.trail.RecordInTx(ctx, e)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				break // the trail keeps no pending records
			}
			srow, err := storeRow(row)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, srow)
		}
		if len(rows) == len(es) {
			res, err := s.inner.Batch(store.WithRecords(ctx, rows), ops)
			if len(rows) > 0 { // even on error, as Put
				s.trail.Recorded()
			}
			return res, entries, err
		}
	}
	if !batchWrites(ops) {
		if wait, ok, err := startReads(ctx, s.trail, es); ok {
			if err != nil {
				return nil, nil, err
			}
			res, err := s.inner.Batch(ctx, ops)
			if werr := wait(); werr != nil {
				return nil, nil, werr
			}
			return res, entries, err
		}
	}
	if err := s.trail.LogAll(ctx, es); err != nil {
		return nil, nil, err
	}
	res, err := s.inner.Batch(ctx, ops)
	return res, entries, err
}

// startReads queues es as reads' records, as Get's is queued, when the
// trail keeps pending records (ok): no trail lock, no wait for the chain.
// wait returns once every one is durable, or the first failure. When a
// record cannot be queued, wait has been called for those before it.
func startReads(ctx context.Context, t *Trail, es []Entry) (wait func() error, ok bool, err error) {
	waits := make([]func() error, 0, len(es))
	wait = func() error {
		var err error
		for _, w := range waits {
			if werr := w(); werr != nil && err == nil {
				err = werr
			}
		}
		return err
	}
	for _, e := range es {
		w, pending, err := t.startRead(ctx, e)
		if !pending {
			return nil, false, nil // the same for every record of the trail
		}
		if err != nil {
			_ = wait()
			return nil, true, err
		}
		waits = append(waits, w)
	}
	return wait, true, nil
}

// recordReads records es as reads and returns once they are durable.
func recordReads(ctx context.Context, t *Trail, es []Entry) error {
	wait, ok, err := startReads(ctx, t, es)
	if !ok {
		return t.LogAll(ctx, es)
	}
	if err != nil {
		return err
	}
	return wait()
}

// batchWrites reports whether ops hold a put or a delete.
func batchWrites(ops []store.Op) bool {
	for _, op := range ops {
		if _, ok := op.(store.PutOp); ok {
			return true
		}
	}
	return false
}

// listItems implements store.Lister (a read of the namespace).
func (s *Store) listItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	l, ok := s.inner.(store.Lister)
	if !ok {
		return nil, unsupported(s.inner, "list items")
	}
	e, err := s.entry(ctx, OpItemRead, ns, "")
	if err != nil {
		return nil, err
	}
	return readRecorded(ctx, s.trail, e, func(ctx context.Context) ([]store.Item, error) { return l.ListItems(ctx, ns, opt) })
}

// deletePrefix implements store.PrefixDeleter.
func (s *Store) deletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	d, ok := s.inner.(store.PrefixDeleter)
	if !ok {
		return 0, unsupported(s.inner, "delete by prefix")
	}
	if err := s.log(ctx, OpItemDelete, prefix, ""); err != nil {
		return 0, err
	}
	return d.DeletePrefix(ctx, prefix)
}

// putIf implements store.ConditionalPutter.
func (s *Store) putIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	if s.closed.Load() {
		return errClosed
	}
	c, ok := s.inner.(store.ConditionalPutter)
	if !ok {
		return unsupported(s.inner, "put conditionally")
	}
	wctx, inTx, err := s.writeCtx(ctx, OpItemWrite, ns, key)
	if err != nil {
		return err
	}
	err = c.PutIf(wctx, ns, key, value, cond, opts...)
	if inTx {
		s.trail.Recorded() // even on error: a write whose commit was cut off may have committed
	}
	return err
}

// reencrypt implements store.Reencrypter.
func (s *Store) reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	if s.closed.Load() {
		return reencrypt.Stats{}, errClosed
	}
	r, ok := s.inner.(store.Reencrypter)
	if !ok {
		return reencrypt.Stats{}, unsupported(s.inner, "re-encrypt")
	}
	if err := s.trail.Log(ctx, OpReencrypt, "store", "", ""); err != nil {
		return reencrypt.Stats{}, err
	}
	return r.Reencrypt(ctx, opt)
}

// TargetTTLSweep is the target of the item.delete record a sweep of
// expired items writes before it runs: which items it deletes is not known
// before it runs (they are the items expired at that moment), and
// recording each would cost a row per item.
const TargetTTLSweep = "ttl:expired"

// sweep implements store.Sweeper: a sweep is one item.delete record,
// target TargetTTLSweep, written before it deletes anything. A store opened
// with an audit trail must run its background sweeps through this method
// (store.StartSweeper over the audited store, its inner sweeper off), or
// they delete unrecorded; vault.Open does so.
func (s *Store) sweep(ctx context.Context) (int, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	sw, ok := s.inner.(store.Sweeper)
	if !ok {
		return 0, unsupported(s.inner, "sweep")
	}
	if err := s.trail.Log(ctx, OpItemDelete, TargetTTLSweep, "", ""); err != nil {
		return 0, err
	}
	return sw.Sweep(ctx)
}

// reembed implements store.Reembedder (recorded as a re-encryption of the
// vectors).
func (s *Store) reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	if s.closed.Load() {
		return 0, errClosed
	}
	r, ok := s.inner.(store.Reembedder)
	if !ok {
		return 0, unsupported(s.inner, "re-embed")
	}
	if err := s.trail.Log(ctx, OpReencrypt, "store vectors", "", ""); err != nil {
		return 0, err
	}
	return r.Reembed(ctx, to, opt)
}

// Close closes the wrapped store when it can be closed; from then on
// every operation fails with store.ErrClosed.
func (s *Store) Close() error {
	s.closed.Store(true)
	if c, ok := s.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// storeRow is the trail's row for the store's transaction. The store has
// its own RecordRow (it never imports the checkpointer), with fewer fields:
// Table, Columns and Values are carried, and a row setting any other field
// (After and AfterValues today, any field added later) is refused rather
// than inserted without it — a copy by field names would drop it
// silently, inserting a record without the lock or the row it must be
// made after.
func storeRow(row *checkpointer.RecordRow) (*store.RecordRow, error) {
	rest := *row
	rest.Table, rest.Columns, rest.Values = "", nil, nil
	if v := reflect.ValueOf(rest); !v.IsZero() {
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				return nil, fmt.Errorf("audit: the trail's record row sets %s, which a store's transaction cannot carry", v.Type().Field(i).Name)
			}
		}
	}
	return &store.RecordRow{Table: row.Table, Columns: row.Columns, Values: row.Values}, nil
}
