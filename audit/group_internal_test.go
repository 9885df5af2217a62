package audit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gateTable is a MemoryTable whose first appends wait at gates the test
// opens, the second failing without storing anything: a commit that is
// slow, then one that fails (a lost connection, a full disk).
type gateTable struct {
	*MemoryTable
	calls    atomic.Int64
	entered  [3]chan struct{} // closed when append i (1, 2) began
	release  [3]chan struct{} // closed by the test to let append i go on
	errFault error
}

func newGateTable() *gateTable {
	g := &gateTable{MemoryTable: NewMemoryTable(), errFault: errors.New("injected commit failure")}
	for i := range g.entered {
		g.entered[i], g.release[i] = make(chan struct{}), make(chan struct{})
	}
	return g
}

func (g *gateTable) Append(ctx context.Context, chain func(*Record) ([]Record, error)) error {
	n := g.calls.Add(1)
	if n == 1 || n == 2 {
		close(g.entered[n])
		<-g.release[n]
	}
	if n == 2 && g.errFault != nil {
		return g.errFault
	}
	if err := ctx.Err(); err != nil {
		return err // as a database's client would
	}
	return g.MemoryTable.Append(ctx, chain)
}

// TestGroupCommitFailureFailsItsBatchOnly: callers that arrive while a
// commit runs are written together in the next commit (one Table.Append);
// when that commit fails, every caller of the batch gets the error, no
// record of theirs is stored, and the callers queued behind them are
// written by the commit after, in a trail that verifies.
func TestGroupCommitFailureFailsItsBatchOnly(t *testing.T) {
	const nB, nC = 12, 9
	g := newGateTable()
	tr, err := NewTrail(g, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	// Count the callers that reached the queue: the trail takes each
	// one's time under the queue's lock, as it enqueues it.
	var arrived atomic.Int64
	tr.now = func() time.Time { arrived.Add(1); return time.Now() }
	waitArrived := func(n int64) {
		for arrived.Load() < n {
			runtime.Gosched()
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	log := func(target string) {
		wg.Go(func() {
			err := tr.Log(ctx, OpItemWrite, target, "", "")
			mu.Lock()
			errs[target] = err
			mu.Unlock()
		})
	}

	log("A")
	<-g.entered[1] // A's commit runs
	for i := range nB {
		log(fmt.Sprint("B", i))
	}
	waitArrived(1 + nB)
	close(g.release[1]) // A commits; the Bs' batch begins, and waits
	<-g.entered[2]
	for i := range nC {
		log(fmt.Sprint("C", i))
	}
	waitArrived(1 + nB + nC)
	close(g.release[2]) // the Bs' commit fails
	wg.Wait()

	if errs["A"] != nil {
		t.Fatalf("A: %v", errs["A"])
	}
	for i := range nB {
		if err := errs[fmt.Sprint("B", i)]; !errors.Is(err, g.errFault) {
			t.Errorf("B%d, in the failed batch: %v, want the commit's error", i, err)
		}
	}
	for i := range nC {
		if err := errs[fmt.Sprint("C", i)]; err != nil {
			t.Errorf("C%d, queued behind the failed batch: %v", i, err)
		}
	}
	if n := g.calls.Load(); n != 3 {
		t.Errorf("%d commits for 3 batches (A, the Bs, the Cs)", n)
	}
	n, err := tr.Verify(ctx)
	if err != nil || n != 1+nC {
		t.Fatalf("Verify = %d, %v; want %d records", n, err, 1+nC)
	}
	seen := map[string]int64{}
	_ = tr.Records(ctx, Filter{}, func(r Record) error { seen[r.Target] = r.Seq; return nil })
	if seen["A"] != 1 {
		t.Errorf("A is record %d, want 1", seen["A"])
	}
	for i := range nC {
		if seen[fmt.Sprint("C", i)] == 0 {
			t.Errorf("C%d acknowledged but not stored", i)
		}
	}
	for i := range nB {
		if seen[fmt.Sprint("B", i)] != 0 {
			t.Errorf("B%d stored although its commit failed", i)
		}
	}
}

// TestGroupCommitCallerGivesUp: a caller whose context ends while its
// batch waits returns; the batch, committing for the others too, is not
// cancelled with it.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	g := newGateTable()
	g.errFault = nil
	close(g.release[2])
	tr, err := NewTrail(g, Options{Key: key1})
	mustT(t, err)
	var arrived atomic.Int64
	tr.now = func() time.Time { arrived.Add(1); return time.Now() }
	ctx := context.Background()
	var wg sync.WaitGroup
	var errA, errQuit, errStay error
	wg.Go(func() { errA = tr.Log(ctx, OpItemWrite, "A", "", "") })
	<-g.entered[1]
	// "quit" and "stay" queue behind A's commit; "quit" gives up.
	quit, cancel := context.WithCancel(ctx)
	wg.Go(func() { errQuit = tr.Log(quit, OpItemWrite, "quit", "", "") })
	wg.Go(func() { errStay = tr.Log(ctx, OpItemWrite, "stay", "", "") })
	for arrived.Load() < 3 {
		runtime.Gosched()
	}
	cancel()
	close(g.release[1])
	wg.Wait()
	if errA != nil || errStay != nil {
		t.Fatalf("A: %v; the caller that stayed: %v (its batch was cancelled by the one that gave up?)", errA, errStay)
	}
	if errQuit != nil && !errors.Is(errQuit, context.Canceled) {
		t.Errorf("the caller that gave up: %v", errQuit)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 3 {
		t.Fatalf("Verify = %d, %v; want 3 records", n, err)
	}
}
