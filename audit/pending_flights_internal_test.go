package audit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flightPending is a MemoryTable keeping no pending records whose
// AddPending holds each INSERT until the test releases it (hold nil: none
// is held), counting the INSERTs in flight at once and the records stored.
type flightPending struct {
	gatePending
	hold      chan struct{}
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	records   atomic.Int64
	began     chan int // each INSERT's record count, as it begins
}

func (f *flightPending) AddPending(_ context.Context, ps []Pending) error {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	k := 0
	for i := range ps {
		k += ps[i].Len()
	}
	f.records.Add(int64(k))
	if f.began != nil {
		f.began <- k
	}
	if f.hold != nil {
		<-f.hold
	}
	return nil
}

// TestSecondReadersInsertWhileFirstCommits: readers queued behind an
// INSERT that waits for its commit (on a durable cluster, its WAL flush)
// are sent in a second INSERT without waiting for the first to commit,
// once at least minSecondFlight of them queued: their INSERT is written
// while the first one's flush runs. Before, they waited for that commit
// and then sent theirs (one INSERT in flight).
func TestSecondReadersInsertWhileFirstCommits(t *testing.T) {
	f := &flightPending{gatePending: gatePending{MemoryTable: NewMemoryTable()}, hold: make(chan struct{}), began: make(chan int, 64)}
	tr, err := NewTrail(f, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	ctx := WithPrincipal(context.Background(), "reader")
	read := func(i int) error {
		_, err := tr.recordRead(ctx, Entry{Op: OpCheckpointRead, Target: fmt.Sprint("t", i)})
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1+minSecondFlight)
	wg.Go(func() { errs <- read(0) })
	if n := <-f.began; n != 1 {
		t.Fatalf("first INSERT holds %d records, want 1", n)
	}
	for i := 1; i <= minSecondFlight; i++ {
		wg.Go(func() { errs <- read(i) })
	}
	// The first INSERT is held: the queued readers' INSERT must begin
	// regardless. Before, they stayed queued behind it, one leader.
	got := 0
	for got < minSecondFlight {
		select {
		case n := <-f.began:
			got += n
			continue
		default:
		}
		tr.pending.mu.Lock()
		stuck := len(tr.pending.queue) == minSecondFlight && tr.pending.flights == 1
		tr.pending.mu.Unlock()
		if stuck {
			t.Fatalf("%d records queued behind the INSERT in flight, and no second INSERT", minSecondFlight)
		}
		time.Sleep(time.Millisecond)
	}
	if got != minSecondFlight {
		t.Fatalf("second INSERT holds %d records, want %d", got, minSecondFlight)
	}
	close(f.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := f.maxFlight.Load(); m != 2 {
		t.Fatalf("%d readers' INSERTs in flight at most, want 2", m)
	}
}

// TestReadersFlightsStoreEveryRecord: many readers, queued before they
// read (startRead) and recorded before (recordRead), over INSERTs of
// varying duration: every read gets its answer (none is left queued with
// no leader: the test would hang), every record is stored, and no more
// than maxReadFlights INSERTs are in flight at once.
func TestReadersFlightsStoreEveryRecord(t *testing.T) {
	f := &flightPending{gatePending: gatePending{MemoryTable: NewMemoryTable()}}
	tr, err := NewTrail(f, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	ctx := WithPrincipal(context.Background(), "reader")
	const readers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, readers*each)
	for w := range readers {
		wg.Go(func() {
			for i := range each {
				e := Entry{Op: OpCheckpointRead, Target: fmt.Sprint("t", w, "-", i)}
				if (w+i)%2 == 0 {
					_, err := tr.recordRead(ctx, e)
					errs <- err
					continue
				}
				wait, _, err := tr.startRead(ctx, e)
				if err == nil {
					if i%3 == 0 {
						time.Sleep(50 * time.Microsecond) // the read
					}
					err = wait()
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.records.Load(); n != readers*each {
		t.Fatalf("%d records stored, want %d", n, readers*each)
	}
	if m := f.maxFlight.Load(); m > int64(maxReadFlights) {
		t.Fatalf("%d INSERTs in flight at once, at most %d allowed", m, maxReadFlights)
	}
	tr.pending.mu.Lock()
	defer tr.pending.mu.Unlock()
	if tr.pending.flights != 0 || tr.pending.inserting != 0 || len(tr.pending.queue) != 0 {
		t.Fatalf("after every read: %d leaders, %d INSERTs, %d queued; want none", tr.pending.flights, tr.pending.inserting, len(tr.pending.queue))
	}
}
