package audit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// memPending is a MemoryTable that keeps pending records in memory and
// chains them as a PendingTable does: AppendPending links the oldest
// into the chain and removes them.
type memPending struct {
	*MemoryTable
	mu   sync.Mutex
	rows []Pending
}

func (m *memPending) AddPending(_ context.Context, ps []Pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, ps...)
	return nil
}

func (m *memPending) PendingRow(Pending) *checkpointer.RecordRow { return nil }

func (m *memPending) AppendPending(ctx context.Context, limit int, chain func(*Record, []Pending) ([]Record, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	taken := m.rows[:min(limit, len(m.rows))]
	if err := m.MemoryTable.Append(ctx, func(last *Record) ([]Record, error) { return chain(last, taken) }); err != nil {
		return err
	}
	m.rows = append(m.rows[:0:0], m.rows[len(taken):]...)
	return nil
}

func (m *memPending) PagePending(_ context.Context, _ time.Time, _ string, limit int) ([]Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Pending(nil), m.rows[:min(limit, len(m.rows))]...), nil
}

func (m *memPending) pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows)
}

// TestDelayedRunChainsALateCommit: a write's record counted before the
// write committed (checkpointer/durable queues the write; its writer
// commits it later) is missed by a Flush that runs in between, though
// that Flush catches up with the count; the chaining run the record
// armed must still chain it once it is there, not skip because the count
// says everything was chained.
func TestDelayedRunChainsALateCommit(t *testing.T) {
	m := &memPending{MemoryTable: NewMemoryTable()}
	tr, err := NewTrail(m, Options{Key: key1, DatabaseID: "db-1", WritesInTx: true})
	mustT(t, err)
	ctx := context.Background()
	// The chainer's mutex, held throughout, keeps the run the count arms
	// (chainDelay later) from beginning before the record is there,
	// however slow the machine: the run takes the mutex first.
	tr.chaining.mu.Lock()
	tr.Recorded() // the write returned, queued: its record is counted
	mustT(t, tr.flushLocked(ctx))
	// The queued write commits, its record with it.
	mustT(t, m.AddPending(ctx, []Pending{tr.pendingOf(Entry{Op: OpCheckpointWrite, Target: "late"}, "writer", time.Now().UTC().Truncate(time.Microsecond))}))
	tr.chaining.mu.Unlock()
	// Event-driven: the run is due in 20 ms; a minute only bounds a run
	// that never comes.
	for deadline := time.Now().Add(time.Minute); m.pending() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a record committed after a Flush that caught up with the count was never chained by the run its write armed")
		}
	}
	var chained []string
	mustT(t, tr.Records(ctx, Filter{}, func(r Record) error { chained = append(chained, r.Target); return nil }))
	if len(chained) != 1 || chained[0] != "late" {
		t.Fatalf("chained records %q; want [late]", chained)
	}
}
