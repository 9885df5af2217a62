package audit

import (
	"context"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// ChainRowTable is a PendingTable whose chained records a read can insert
// in its own statement or transaction: a read alone in flight then
// appends its record to the chain directly — one row, MACed and linked as
// the chainer would link it — instead of a pending row that a chaining
// transaction later copies into the chain and deletes (three writes of
// the record, two commits). See Trail.chainedReadRow.
type ChainRowTable interface {
	PendingTable
	// ChainRow is r, one record linked after the trail's last record, as
	// the row that a read of the trail's database inserts in its own
	// transaction. The insert must take whatever the table's appenders
	// take to read the last record and append after it (RecordRow.After),
	// and must fail — not be skipped — when a record with r's sequence
	// number is stored already: that is how a stale head shows. It must
	// fail too when the record before r (sequence number r.Seq-1) is not
	// stored with link prevLink: the trail was cut back or wiped behind
	// the head this process knows (restored from a backup, replaced),
	// and r would follow a gap, or a record that is not there.
	ChainRow(r Record, prevLink string) *checkpointer.RecordRow
	// IsChainConflict reports whether err (from a read carrying a
	// ChainRow) says a record with the row's sequence number was stored
	// already, or the record before it is not the one it was linked
	// after: another appender got there first, or the trail changed
	// behind this process, and nothing of the read's transaction was
	// stored.
	IsChainConflict(err error) bool
}

// head is the last record this process knows the trail to end with: one
// it appended (a chained record under the current key, after the data
// database recorded that the chain began), or one a read appended after
// it. A read alone in flight links its record after it (chainedReadRow).
// It may be stale — another process, or this one's chainer, appended
// since — which the insert finds out (ChainRowTable): the read then
// records as before. It is never ahead of the table.
type head struct {
	ok   bool
	seq  int64
	link string
}

// noteHead records that the trail holds r, appended and committed by this
// process under the current key. Heads only move forward: a slow caller
// cannot set an older one over a newer.
func (t *Trail) noteHead(r *Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.head.ok && r.Seq <= t.head.seq {
		return
	}
	t.head = head{ok: true, seq: r.Seq, link: r.Link}
}

// dropHead forgets the head: the next read records a pending row, and
// the chainer's next run, which reads the head under the table's lock,
// sets it again.
func (t *Trail) dropHead() {
	t.mu.Lock()
	t.head.ok = false
	t.mu.Unlock()
}

// chainedRead is a read's record chained by the read itself.
type chainedRead struct {
	t   *Trail
	rec Record
}

// chainedReadRow returns the record of e, a read alone in flight, linked
// after the head this process knows, as a row for the read's own
// transaction (ok false: the table cannot take it so, the trail does not
// keep its records in the data's database, or no head is known). Once the
// read returned, call done with its error.
func (t *Trail) chainedReadRow(ctx context.Context, e Entry) (row *checkpointer.RecordRow, c *chainedRead, ok bool, err error) {
	ct, isChain := t.table.(ChainRowTable)
	if !isChain || !t.writesInTx {
		return nil, nil, false, nil
	}
	t.mu.Lock()
	h := t.head
	t.mu.Unlock()
	if !h.ok {
		return nil, nil, false, nil
	}
	if e, err = e.normalized(); err != nil {
		return nil, nil, true, err
	}
	if err := t.readyToRecord(ctx, []Entry{e}); err != nil {
		return nil, nil, true, err
	}
	who, err := recordPrincipal(ctx)
	if err != nil {
		return nil, nil, true, err
	}
	r := Record{Seq: h.seq + 1, Time: t.now().UTC().Truncate(time.Microsecond), Principal: who,
		Op: e.Op, Target: e.Target, Subject: e.Subject, KeyID: e.KeyID}
	r.Link = linkOf(h.link, &r, "")
	r.MAC = t.keys[0].auth(r.Link)
	return ct.ChainRow(r, h.link), &chainedRead{t: t, rec: r}, true, nil
}

// done takes the outcome of the read that carried c's row: nil, the
// record is the trail's new head; a conflict (another appender took the
// sequence number: nothing was stored), retry is true and the caller
// records the read another way; any other error, the head is forgotten
// (the row may or may not have committed) and the read fails.
func (c *chainedRead) done(err error) (retry bool) {
	if err == nil {
		c.t.noteHead(&c.rec)
		return false
	}
	c.t.dropHead()
	ct, _ := c.t.table.(ChainRowTable)
	return ct.IsChainConflict(err)
}
