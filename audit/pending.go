package audit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// Pending records. A table that keeps them (PendingTable) lets an audited
// write make its record durable in the write's own transaction, when the
// data lives in the trail's database (Options.WritesInTx): one INSERT of
// an unchained, MACed row, committed with the write — one commit for
// both, no wait for the trail's lock, and a write that fails leaves no
// record. No audited write returns before its record is durable. A
// chainer then moves pending records into the hash chain, oldest first,
// under the trail's lock, in one transaction that deletes the rows it
// chained: a pending record is either pending or chained, never neither.
// It runs shortly after a write (chainDelay), in every append (LogAll,
// Anchor: their records follow the pending ones), and in Flush; pending
// rows a killed process left are chained by the next chainer of any
// process.
//
// Check counts pending records as part of the trail: each must hold its
// MAC (under a configured audit key, bound to the database), and the
// report says how many there are and how old the oldest is, so that a
// pending record that never gets chained does not go unnoticed. What a
// pending row copied, withheld or deleted shows: see the package doc
// (Pending records).

// Pending is a record made durable but not chained yet.
type Pending struct {
	// ID is random and unique (the pending row's key): two pending rows
	// never share it, and the record chained from it keeps it
	// (Record.PendingID), so that it is chained once only.
	ID        string
	Time      time.Time
	Principal string
	Op        string
	Target    string
	Subject   string
	KeyID     string
	// More are the records after the first that the row holds: a batch
	// of concurrent reads' records stored as one row (see recordRead), so
	// that the batch costs one row to make, one to chain and one to
	// delete instead of one each per read. Empty for a row of one record
	// (every write's). The records chained from the row name its ID (the
	// first) and ID.1, ID.2, … (MemberID), and a table stores them in one
	// row (BatchRows).
	More []PendingEntry
	// MAC is "<audit key id>:<hex HMAC-SHA256>" over the other fields and
	// the trail's database id (and, for a batch, every record in More).
	MAC string
	// Chained is not stored with the row: the table sets it when it reads
	// the row (AppendPending, PagePending) to the sequence number of the
	// chained record that holds ID (Record.PendingID), 0 when none does.
	// A pending row whose id was chained already is a copy inserted again.
	Chained int64
}

// PendingEntry is a record of a batch after its first (Pending.More).
type PendingEntry struct {
	Time      time.Time
	Principal string
	Op        string
	Target    string
	Subject   string
	KeyID     string
}

// Len is how many records p holds: its first and More.
func (p *Pending) Len() int { return 1 + len(p.More) }

// MemberID is the pending id of the record at index i of the pending row
// id (0: its first record, whose id is the row's): id itself, then
// "id.1", "id.2", …. A chained record commits to it (Record.PendingID).
func MemberID(id string, i int) string {
	if i == 0 {
		return id
	}
	return id + "." + strconv.Itoa(i)
}

// PendingTable is a Table that also keeps pending records (see above).
type PendingTable interface {
	Table
	// AddPending stores ps in one transaction.
	AddPending(ctx context.Context, ps []Pending) error
	// PendingRow is p as a row that a write of the trail's database
	// inserts in its own transaction (checkpointer.WithRecord).
	PendingRow(p Pending) *checkpointer.RecordRow
	// AppendPending is Append, with chain also given up to limit pending
	// records, oldest first, read under the same lock, each with Chained
	// set: the transaction deletes them with storing what chain returns.
	// The table stores each record's PendingID, and refuses (fails the
	// transaction) a record whose PendingID a stored record holds already
	// (a unique index).
	AppendPending(ctx context.Context, limit int, chain func(last *Record, pending []Pending) ([]Record, error)) error
	// PagePending returns up to limit pending records, oldest first
	// (by time, then id), after (time, id) of the last one returned
	// before (the zero time and "" for the first page), each with Chained
	// set.
	PagePending(ctx context.Context, afterTime time.Time, afterID string, limit int) ([]Pending, error)
}

// labelPending is the domain label of pending records' MACs;
// labelPendingBatch that of a row holding a batch (Pending.More).
const (
	labelPending      = "memvault/audit-pending/v2"
	labelPendingBatch = "memvault/audit-pending-batch/v3"
)

// chainDelay is how long after a pending record is made the chainer runs:
// the records made meanwhile are chained by one transaction.
const chainDelay = 20 * time.Millisecond

// chainBatch is how many pending records one chaining transaction moves.
const chainBatch = 1000

// pendingMAC is p's MAC under k, bound to database dbID.
func pendingMAC(k *auditKey, dbID string, p *Pending) string {
	if len(p.More) == 0 {
		return k.id + ":" + k.mac(labelPending, dbID, p.ID, p.Time.UTC().Format(time.RFC3339Nano),
			p.Principal, p.Op, p.Target, p.Subject, p.KeyID)
	}
	// A batch's MAC covers every record and their number: a row cannot
	// be split, cut or extended and keep it.
	fields := make([]string, 0, 5+6*p.Len())
	fields = append(fields, labelPendingBatch, dbID, p.ID, strconv.Itoa(p.Len()))
	fields = append(fields, p.Time.UTC().Format(time.RFC3339Nano), p.Principal, p.Op, p.Target, p.Subject, p.KeyID)
	for _, e := range p.More {
		fields = append(fields, e.Time.UTC().Format(time.RFC3339Nano), e.Principal, e.Op, e.Target, e.Subject, e.KeyID)
	}
	return k.id + ":" + k.mac(fields...)
}

// checkPending returns ErrTampered (or ErrUnverifiable) when p does not
// hold its MAC under a configured key.
func (t *Trail) checkPending(p *Pending) error {
	id, _, ok := cutMAC(p.MAC)
	if !ok {
		return tampered("pending record %s has a malformed MAC", p.ID)
	}
	k := t.key(id)
	if k == nil {
		return unverifiable("pending record %s is under audit key %s, which is not configured", p.ID, id)
	}
	if !hmac.Equal([]byte(pendingMAC(k, t.dbID, p)), []byte(p.MAC)) {
		return tampered("pending record %s does not match its MAC (edited, or copied from another database's trail)", p.ID)
	}
	if p.Chained != 0 {
		return tampered("pending record %s was chained already, as record %d: it was copied and inserted again "+
			"(records are not made until it is removed from the pending records' table)", p.ID, p.Chained)
	}
	return nil
}

// LateAfter is how much older than a record chained before it a record
// chained from a pending record may be before Check counts it as late
// (Report.Late): longer than an audited write's transaction should take
// from its record's time to its commit, plus the difference between the
// clocks of the processes writing the trail. See the package doc
// (Pending records) on withheld pending rows.
const LateAfter = 10 * time.Minute

func cutMAC(s string) (id, mac string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			id, mac = s[:i], s[i+1:]
			return id, mac, len(id) == 16 && len(mac) == 64 && isHex(id) && isHex(mac)
		}
	}
	return "", "", false
}

// pendingOf is the pending record of e by who at now. Its id is its time
// (microseconds, big-endian) then 8 random bytes: unique as a random id
// (two records of one microsecond differ in 64 random bits), and ordered
// by time, so that the chain's unique index on pending ids grows at its
// end instead of dirtying a page anywhere in it for each record (SQLite,
// 20 000 audited puts: 44 050 bytes written per put with random ids,
// 38 900 with these, 38 370 before the index). Nothing relies on an id
// being unpredictable: a pending row is authenticated by its MAC.
func (t *Trail) pendingOf(e Entry, who string, now time.Time) Pending {
	p := t.unsealedPendingOf(e, who, now)
	p.MAC = pendingMAC(&t.keys[0], t.dbID, &p)
	return p
}

// unsealedPendingOf is pendingOf without the MAC: a read's record, whose
// row's MAC batchOf computes once for the whole batch (a MAC per record
// as well was computed for nothing whenever the batch held more than
// one).
func (t *Trail) unsealedPendingOf(e Entry, who string, now time.Time) Pending {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], uint64(now.UnixMicro()))
	_, _ = rand.Read(id[8:])
	return Pending{ID: hex.EncodeToString(id[:]), Time: now, Principal: who, Op: e.Op, Target: e.Target, Subject: e.Subject, KeyID: e.KeyID}
}

// chainer is a Trail's state of chaining pending records.
type chainer struct {
	mu    sync.Mutex // one chaining run at a time in the process
	armed atomic.Bool
	// made counts the pending records this process made (chainSoon's
	// calls, made once the write carrying the record returned); chained
	// is made's value when the last successful chaining run began, so
	// every record counted up to it that had committed is chained. A run
	// armed by records that a Flush chained since has nothing of this
	// process's to do: when the pending table is empty too (anyPending)
	// it is skipped, rather than take the trail's lock for nothing —
	// which a read alone in flight, chaining its own record with a
	// try-lock, would find held and record a pending row instead
	// (ChainRowTable).
	made, chained atomic.Uint64
	// failed holds the error of the last chaining run that failed (nil
	// when the last one succeeded): while it is set, records are not
	// made before a chaining run succeeds, so a writer does not go on
	// recording past a trail it refuses to extend.
	failed atomic.Pointer[error]
}

// pendingTable returns the table as a PendingTable, when it is one.
func (t *Trail) pendingTable() (PendingTable, bool) {
	pt, ok := t.table.(PendingTable)
	return pt, ok
}

// RecordInTx returns the record of e by ctx's principal as a row to
// insert in a write's own transaction (checkpointer.WithRecord); ok is
// false when the trail cannot take it so (its table keeps no pending
// records, or Options.WritesInTx is not set: the data lives elsewhere).
// Once the write committed, call Recorded.
func (t *Trail) RecordInTx(ctx context.Context, e Entry) (row *checkpointer.RecordRow, ok bool, err error) {
	pt, isPending := t.pendingTable()
	if !isPending || !t.writesInTx {
		return nil, false, nil
	}
	if e, err = e.normalized(); err != nil {
		return nil, true, err
	}
	if err := t.readyToRecord(ctx, []Entry{e}); err != nil {
		return nil, true, err
	}
	who, err := recordPrincipal(ctx)
	if err != nil {
		return nil, true, err
	}
	p := t.pendingOf(e, who, t.now().UTC().Truncate(time.Microsecond))
	return pt.PendingRow(p), true, nil
}

// Recorded tells the trail a pending record was made (by a write that
// committed a RecordInTx row): the chainer will link it.
func (t *Trail) Recorded() { t.chainSoon() }

// readyToRecord refuses reserved operations and, when the last chaining
// run failed, chains first: a trail the writer will not extend (tampered,
// unverifiable) gets no more records.
func (t *Trail) readyToRecord(ctx context.Context, es []Entry) error {
	for _, e := range es {
		if len(e.Op) >= len(reservedOps) && e.Op[:len(reservedOps)] == reservedOps {
			return fmt.Errorf("%w %q", ErrReservedOp, e.Op)
		}
	}
	if err := t.headCheck(ctx); err != nil {
		return err
	}
	if t.chaining.failed.Load() != nil {
		return t.Flush(ctx)
	}
	return nil
}

// headCheck refuses to record through a table that holds no record while
// the data database says the chain began: the trail was wiped or replaced
// (MEMVAULT_AUDIT_TABLE naming a new file or schema). An append finds
// that out as it links, but a pending record — a write's in its own
// transaction, a read's — is made without reading the chain, so without
// this check the first operations through a replaced trail succeeded and
// only the chainer noticed. It reads once per trail: once the table is
// seen holding records, or the chain has not begun (this trail then
// begins it), later records are checked by the chainer.
func (t *Trail) headCheck(ctx context.Context) error {
	if t.headSeen.Load() {
		return nil
	}
	began, err := t.chainBegan(ctx)
	if err != nil {
		return err
	}
	if began {
		first, err := t.table.Page(ctx, 0, 1)
		if err != nil {
			return fmt.Errorf("audit: read the trail's first record: %w", err)
		}
		if len(first) == 0 {
			return tampered("the trail is empty, but the data database records that its hash chain began: " +
				"the trail was wiped or replaced; refusing to record through it (restore it, or see the README to start a new trail on purpose)")
		}
	}
	t.headSeen.Store(true)
	return nil
}

// chainSoon counts a pending record this process made and runs the
// chainer chainDelay from now, unless it is already due; the run does
// nothing when a Flush or an append since chained every record counted
// (chainer.made) and no record is pending (anyPending).
func (t *Trail) chainSoon() {
	t.chaining.made.Add(1)
	if !t.chaining.armed.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(chainDelay, func() {
		// Disarm first: a record counted after this run's check arms a
		// run of its own.
		t.chaining.armed.Store(false)
		ctx := context.Background()
		t.chaining.mu.Lock()
		defer t.chaining.mu.Unlock()
		if t.chaining.chained.Load() >= t.chaining.made.Load() && !t.anyPending(ctx) {
			return // a Flush chained them since, and nothing else is pending
		}
		_ = t.flushLocked(ctx) // its error is kept in failed
	})
}

// anyPending reports whether the pending table holds a record, reading
// it without the trail's lock (true when it cannot tell). A run that the
// count says has nothing of this process's to chain looks first: a
// record counted before its write committed (a write queued by
// checkpointer/durable, committed later by its writer) may have been
// missed by the Flush that caught up with the count.
func (t *Trail) anyPending(ctx context.Context) bool {
	pt, _ := t.pendingTable()
	ps, err := pt.PagePending(ctx, time.Time{}, "", 1)
	return err != nil || len(ps) > 0
}

// Flush links every pending record into the chain now (of every process:
// those a killed process left too), and returns once they are. A trail
// whose table keeps no pending records has nothing to do.
func (t *Trail) Flush(ctx context.Context) error {
	if _, ok := t.pendingTable(); !ok {
		return nil
	}
	t.chaining.mu.Lock()
	defer t.chaining.mu.Unlock()
	return t.flushLocked(ctx)
}

// flushLocked is Flush with the chainer's mutex held.
func (t *Trail) flushLocked(ctx context.Context) error {
	// A record counted by now was written before this run reads the
	// pending table, so the run chains it (chainer.made) — unless its
	// write was only queued (checkpointer/durable): anyPending.
	made := t.chaining.made.Load()
	for {
		n, err := t.chainPending(ctx, nil)
		if err != nil {
			t.chaining.failed.Store(&err)
			return err
		}
		if n < chainBatch {
			t.chaining.failed.Store(nil)
			t.chaining.chained.Store(made)
			return nil
		}
	}
}

// chainPending runs one chaining transaction: up to chainBatch pending
// records, then batch's (direct appends, such as an anchor), and returns
// how many pending records it chained.
func (t *Trail) chainPending(ctx context.Context, batch []*request) (int, error) {
	pt, _ := t.pendingTable()
	n := 0
	err := t.appendWith(ctx, func(ctx context.Context, chain func(last *Record, pending []Pending) ([]Record, error)) error {
		return pt.AppendPending(ctx, chainBatch, func(last *Record, pending []Pending) ([]Record, error) {
			n = len(pending)
			return chain(last, pending)
		})
	}, batch)
	return n, err
}

// recordRead makes e, the record of a read, durable as a pending record
// committed by itself (PendingTable.AddPending: one INSERT, one commit),
// and has the chainer link it shortly after. A read changes nothing, so
// its record need not commit with anything; as a pending row it takes no
// trail lock and reads no chain head, so readers do not queue behind the
// chain's appender (or a chaining run). Concurrent readers' records share
// INSERTs (pendingGroup), and rows: one pending row a batch (batchOf),
// chained as one row. ok is false when the table keeps no pending
// records: the caller appends instead (LogAll).
func (t *Trail) recordRead(ctx context.Context, e Entry) (ok bool, err error) {
	pt, isPending := t.pendingTable()
	if !isPending {
		return false, nil
	}
	p, err := t.readPending(ctx, e)
	if err != nil {
		return true, err
	}
	if err := t.addPending(ctx, pt, p); err != nil {
		return true, fmt.Errorf("audit: record of a read: %w", err)
	}
	t.chainSoon()
	return true, nil
}

// readPending is the pending record of e, a read, by ctx's principal,
// unsealed (batchOf MACs its batch's row).
func (t *Trail) readPending(ctx context.Context, e Entry) (Pending, error) {
	e, err := e.normalized()
	if err != nil {
		return Pending{}, err
	}
	if err := t.readyToRecord(ctx, []Entry{e}); err != nil {
		return Pending{}, err
	}
	who, err := recordPrincipal(ctx)
	if err != nil {
		return Pending{}, err
	}
	return t.unsealedPendingOf(e, who, t.now().UTC().Truncate(time.Microsecond)), nil
}

// pendingGroup is the queue of a Trail's readers' pending records: as
// group.go does for appends, the records that arrive while an INSERT
// commits wait, and the next INSERT stores all of them (one commit, one
// WAL flush, for up to maxBatch reads), led by the caller that finds none
// running — or, for a read queued before it runs (startRead), by a
// goroutine, while the caller reads — and then by one goroutine until the
// queue is empty. Each caller is told its INSERT's outcome once it
// committed or failed.
//
// A leader that takes over from an INSERT that just committed (records
// queued meanwhile: readers are concurrent) first gathers: it waits until
// the queue holds as many records as the INSERT answered plus those
// queued, or for half that INSERT's duration at most (gatherWait). The
// readers the commit released mostly read again at once, and their next
// records join this INSERT instead of the one after: get_tuple at 16 in
// flight on PostgreSQL (pgaudit BenchmarkAuditedOps, 3 interleaved runs)
// went from 0.141–0.149 to 0.112–0.127 transactions a read, where an
// extra commit cost the server ~200 µs of CPU (a 2-core machine, fsync
// on). A reader alone never waits (no records queued behind its INSERT,
// no takeover), and no record waits for more than half a commit longer.
// Two INSERTs in flight at once (branch s21-audit's readFlights) went the
// other way: 0.14 → 0.21 transactions a read, +14–25 µs of server CPU.
type pendingGroup struct {
	mu    sync.Mutex
	queue []*pendingReq
	busy  bool
	// want is how many queued records a gathering leader waits for (0:
	// none waits); full is signalled when the queue reaches it.
	want int
	full chan struct{}
	// batches counts the INSERTs, for the tests.
	batches atomic.Int64
}

// maxGather bounds how long a taking-over leader gathers records.
const maxGather = 2 * time.Millisecond

// gatherWait is how long a leader taking over from an INSERT that took
// took to commit gathers at most: half of it, up to maxGather (a variable: a test
// waits for its records however slow the machine).
var gatherWait = func(took time.Duration) time.Duration { return min(took/2, maxGather) }

// pendingReq is one reader's record waiting for its INSERT.
type pendingReq struct {
	ctx  context.Context
	p    Pending
	err  error
	done chan struct{}
}

// addPending stores p with the other readers' records queued meanwhile,
// and returns once that INSERT committed (or with its error).
func (t *Trail) addPending(ctx context.Context, pt PendingTable, p Pending) error {
	r, lead := t.enqueuePending(ctx, p)
	if lead {
		// The caller stores its own batch, then leaves the batches queued
		// meanwhile to one goroutine that stores them until none is left
		// (not a goroutine per batch: at 16 reads in flight the queue
		// never empties, and each new goroutine paid its start and the
		// growth of its stack through pgx's calls again).
		if took, want, more := t.leadPending(pt, 0, 0); more {
			go t.leadPendingFrom(pt, took, want)
		}
	}
	return r.wait()
}

// enqueuePending queues p for the readers' next INSERT; lead is true
// when no INSERT is running or queued to run: the caller must lead.
func (t *Trail) enqueuePending(ctx context.Context, p Pending) (r *pendingReq, lead bool) {
	r = &pendingReq{ctx: ctx, p: p, done: make(chan struct{})}
	g := &t.pending
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if g.want > 0 && len(g.queue) >= g.want {
		g.want = 0
		g.full <- struct{}{} // buffered, and sent once per want
	}
	lead = !g.busy
	g.busy = true
	g.mu.Unlock()
	return r, lead
}

// leadPendingFrom leads batches until the queue is empty, the first
// taking over from an INSERT that took took (0: none).
func (t *Trail) leadPendingFrom(pt PendingTable, took time.Duration, want int) {
	for more := true; more; {
		took, want, more = t.leadPending(pt, took, want)
	}
}

// wait returns once r's INSERT committed, with its error, or when r's
// context is done.
func (r *pendingReq) wait() error {
	select {
	case <-r.done:
		return r.err
	case <-r.ctx.Done():
		// The record may still be stored by its INSERT: a record of a
		// read that then returns nothing, which is allowed.
		return fmt.Errorf("audit: waiting for the record's commit: %w", context.Cause(r.ctx))
	}
}

// startRead queues the record of a read, e, for the readers' next
// INSERT, without waiting for it: the caller reads meanwhile, then calls
// wait, which returns once the record is durable (or with the error that
// fails the read), and must be called. When the queue has no leader, one
// goroutine leads it. It is recordRead for a read that runs in the
// caller's goroutine: recordRead in a goroutine of its own beside the read
// (whileRecorded) cost each read a goroutine and a hand-off more. ok is
// false when the table keeps no pending records: the caller appends
// instead (LogAll).
func (t *Trail) startRead(ctx context.Context, e Entry) (wait func() error, ok bool, err error) {
	if _, isPending := t.pendingTable(); !isPending {
		return nil, false, nil
	}
	p, err := t.readPending(ctx, e)
	if err != nil {
		return nil, true, err
	}
	r, lead := t.enqueuePending(ctx, p)
	if lead {
		pt, _ := t.pendingTable()
		go t.leadPendingFrom(pt, 0, 0)
	}
	return func() error {
		err := r.wait()
		// Even when the wait failed: a caller's context that ended while
		// the INSERT ran leaves it to commit (or not) all the same.
		t.chainSoon()
		if err != nil {
			return fmt.Errorf("audit: record of a read: %w", err)
		}
		return nil
	}, true, nil
}

// batchOf is the pending row of batch's records, MACed (their records
// come unsealed: unsealedPendingOf): the first's, with the others' in
// More under one MAC (a row of one record is the first's). One row, not
// one per record: the row is made, chained (as one row of the chain,
// BatchRows) and deleted once for the batch — at 16
// reads in flight a batch holds several records, and each row costs the
// database an insert, its index entries and its WAL three times over.
func (t *Trail) batchOf(batch []*pendingReq) Pending {
	p := batch[0].p
	if len(batch) > 1 {
		p.More = make([]PendingEntry, len(batch)-1)
		for i, r := range batch[1:] {
			q := &r.p
			p.More[i] = PendingEntry{Time: q.Time, Principal: q.Principal, Op: q.Op, Target: q.Target, Subject: q.Subject, KeyID: q.KeyID}
		}
	}
	p.MAC = pendingMAC(&t.keys[0], t.dbID, &p)
	return p
}

// leadPending stores the queue's first batch and answers its callers.
// A leader taking over from an INSERT (took > 0: its duration) gathers
// first, until want records are queued (see pendingGroup). more is true
// when records are queued still: the caller leads again, with the took
// and want returned.
func (t *Trail) leadPending(pt PendingTable, took time.Duration, want int) (spent time.Duration, next int, more bool) {
	g := &t.pending
	g.mu.Lock()
	if took > 0 && len(g.queue) < want {
		if g.full == nil {
			g.full = make(chan struct{}, 1)
		}
		g.want = want
		g.mu.Unlock()
		timer := time.NewTimer(gatherWait(took))
		select {
		case <-g.full:
		case <-timer.C:
		}
		timer.Stop()
		g.mu.Lock()
		g.want = 0
		select {
		case <-g.full: // sent after the timer fired: not for the next wait
		default:
		}
	}
	n := min(len(g.queue), maxBatch)
	batch := make([]*pendingReq, n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()

	ctxs := make([]context.Context, n)
	for i, r := range batch {
		ctxs[i] = r.ctx
	}
	ctx, cancel := sharedContext(ctxs)
	g.batches.Add(1)
	start := time.Now()
	err := pt.AddPending(ctx, []Pending{t.batchOf(batch)})
	spent = max(time.Since(start), 1) // > 0: the next leader takes over
	cancel()
	for _, r := range batch {
		r.err = err
		close(r.done)
	}

	g.mu.Lock()
	more = len(g.queue) > 0
	g.busy = more
	// The records of this INSERT's readers, who may read again at once,
	// and those queued while it committed.
	next = min(n+len(g.queue), maxBatch)
	g.mu.Unlock()
	return spent, next, more
}
