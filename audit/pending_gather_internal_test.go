package audit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// gatePending is a MemoryTable that keeps pending records in memory, its
// first AddPending waiting at a gate the test opens: a slow commit of
// readers' records. It records how many records each AddPending stored.
type gatePending struct {
	*MemoryTable
	mu      sync.Mutex
	sizes   []int
	entered chan struct{} // closed when the first AddPending began
	release chan struct{} // closed by the test to let it go on
}

func (g *gatePending) AddPending(_ context.Context, ps []Pending) error {
	g.mu.Lock()
	n := 0 // records, not rows: a batch of reads' records is one row
	for i := range ps {
		n += ps[i].Len()
	}
	g.sizes = append(g.sizes, n)
	first := len(g.sizes) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	}
	return nil
}

func (g *gatePending) PendingRow(Pending) *checkpointer.RecordRow { return nil }

func (g *gatePending) AppendPending(ctx context.Context, _ int, chain func(*Record, []Pending) ([]Record, error)) error {
	return g.MemoryTable.Append(ctx, func(last *Record) ([]Record, error) { return chain(last, nil) })
}

func (g *gatePending) PagePending(context.Context, time.Time, string, int) ([]Pending, error) {
	return nil, nil
}

// TestReadersReleasedByACommitJoinTheNextInsert: readers whose records
// an INSERT committed, reading again at once, have their next records
// stored by the INSERT that takes over from it, with the records queued
// while it committed — one commit for both — instead of by a third one.
func TestReadersReleasedByACommitJoinTheNextInsert(t *testing.T) {
	// Wait for the records however slow the machine: the test must not
	// depend on timing (the production bound is half a commit).
	old := gatherWait
	gatherWait = func(time.Duration) time.Duration { return time.Minute }
	t.Cleanup(func() { gatherWait = old })

	g := &gatePending{MemoryTable: NewMemoryTable(), entered: make(chan struct{}), release: make(chan struct{})}
	tr, err := NewTrail(g, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	ctx := WithPrincipal(context.Background(), "reader")
	read := func(i int) error {
		_, err := tr.recordRead(ctx, Entry{Op: OpCheckpointRead, Target: fmt.Sprint("t", i)})
		return err
	}
	// The first reader's INSERT commits slowly; 3 readers queue behind
	// it. The first reader reads again as soon as its record committed.
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	wg.Go(func() {
		if err := read(0); err != nil {
			errs <- err
			return
		}
		// Its next read comes once the next INSERT's leader took over
		// (it gathers, or it began its INSERT): not before, which
		// would join the queue by chance.
		for {
			tr.pending.mu.Lock()
			gathering := tr.pending.want > 0
			tr.pending.mu.Unlock()
			g.mu.Lock()
			began := len(g.sizes) >= 2
			g.mu.Unlock()
			if gathering || began {
				break
			}
			time.Sleep(time.Millisecond)
		}
		errs <- read(4)
	})
	<-g.entered
	for i := 1; i <= 3; i++ {
		wg.Go(func() { errs <- read(i) })
	}
	for {
		tr.pending.mu.Lock()
		n := len(tr.pending.queue)
		tr.pending.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sizes) != 2 || g.sizes[1] != 4 {
		t.Fatalf("records per INSERT: %v, want [1 4] (the 3 queued readers' and the first reader's next)", g.sizes)
	}
}

// TestReadersInsertAtMostMaxBatch: readers queued behind a slow INSERT
// are stored at most maxBatch records an INSERT (the README's "concurrent
// reads share one INSERT (up to 256)"), and every one of them is stored.
func TestReadersInsertAtMostMaxBatch(t *testing.T) {
	g := &gatePending{MemoryTable: NewMemoryTable(), entered: make(chan struct{}), release: make(chan struct{})}
	tr, err := NewTrail(g, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	ctx := WithPrincipal(context.Background(), "reader")
	read := func(i int) error {
		_, err := tr.recordRead(ctx, Entry{Op: OpCheckpointRead, Target: fmt.Sprint("t", i)})
		return err
	}
	const queued = maxBatch + 44
	errs := make(chan error, queued+1)
	var wg sync.WaitGroup
	wg.Go(func() { errs <- read(0) })
	<-g.entered
	for i := 1; i <= queued; i++ {
		wg.Go(func() { errs <- read(i) })
	}
	for {
		tr.pending.mu.Lock()
		n := len(tr.pending.queue)
		tr.pending.mu.Unlock()
		if n == queued {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	total := 0
	for _, n := range g.sizes {
		if n > maxBatch {
			t.Errorf("an INSERT stored %d records, more than maxBatch (%d): %v", n, maxBatch, g.sizes)
		}
		total += n
	}
	if total != queued+1 {
		t.Errorf("INSERTs stored %d records, want %d: %v", total, queued+1, g.sizes)
	}
	if len(g.sizes) < 2 || g.sizes[1] != maxBatch {
		t.Errorf("records per INSERT %v: want the first after the slow one to take maxBatch (%d) of the %d queued", g.sizes, maxBatch, queued)
	}
}
