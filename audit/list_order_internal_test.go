package audit

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// listCounter is a memory saver that counts its listings.
type listCounter struct {
	checkpointer.Saver
	lists atomic.Int32
}

func (l *listCounter) List(ctx context.Context, cfg *checkpointer.Config, opt checkpointer.ListOptions) iter.Seq2[*checkpointer.Tuple, error] {
	l.lists.Add(1)
	return l.Saver.List(ctx, cfg, opt)
}

// TestListRecordCommitsBeforeListing: an audited listing's record is
// durable before the listing begins (the README: a listing holds its
// connection as it yields, so its record cannot commit while it lists
// without the pool deadlock of TestAuditedListsPoolSize). While the
// record's INSERT is held, the inner saver is not asked to list.
func TestListRecordCommitsBeforeListing(t *testing.T) {
	g := &gatePending{MemoryTable: NewMemoryTable(), entered: make(chan struct{}), release: make(chan struct{})}
	tr, err := NewTrail(g, Options{Key: key1, DatabaseID: "db-1"})
	mustT(t, err)
	mem, err := memsaver.New(memsaver.Options{})
	mustT(t, err)
	inner := &listCounter{Saver: mem}
	s := NewSaver(inner, tr, nil)
	ctx := WithPrincipal(context.Background(), "lister")
	done := make(chan error, 1)
	go func() {
		for _, err := range s.List(ctx, nil, checkpointer.ListOptions{AllThreads: true}) {
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case <-g.entered:
	case err := <-done:
		t.Fatalf("the listing ended (%v) without storing a record", err)
	case <-time.After(time.Minute):
		t.Fatal("no record of the listing was stored within a minute")
	}
	// A listing that overlapped its record would be under way by now;
	// this wait can only let a wrong order show, never fail a right one.
	time.Sleep(100 * time.Millisecond)
	if n := inner.lists.Load(); n != 0 {
		t.Errorf("the inner saver listed %d times while the listing's record was not yet stored", n)
	}
	close(g.release)
	mustT(t, <-done)
	if n := inner.lists.Load(); n != 1 {
		t.Errorf("the inner saver listed %d times after the record was stored, want 1", n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sizes) != 1 || g.sizes[0] != 1 {
		t.Errorf("records per INSERT %v, want [1] (the listing's)", g.sizes)
	}
}
