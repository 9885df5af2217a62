package redissaver

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestScanMergeOrderAndHeld: a listing across threads merges the
// threads' batches into the order the whole sort gave (id descending,
// then thread, then namespace ascending), for every query shape — all
// namespaces or one, a limit or none, before an id, one id — over
// threads that share ids (copies) and ids in several namespaces; and
// it holds at most a first batch per thread plus the batches read
// since, not every id of the threads.
func TestScanMergeOrderAndHeld(t *testing.T) {
	srv := redistest.Shared(t, 8)
	s, err := New(srv.Client(t), Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(37, 1))
	var pool []string
	for i := range 400 {
		pool = append(pool, checkpointer.NewID(i))
		time.Sleep(time.Microsecond) // distinct ids, by time
	}
	slices.Sort(pool)
	nss := []string{"", "a", "b"}
	var all []scanItem
	const threads = 40
	for th := range threads {
		thread := fmt.Sprintf("thread-%02d", th)
		n := 5 + rng.IntN(150)
		if th == 0 {
			n = 400 // one long thread, past several batches
		}
		ids := slices.Clone(pool)
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ids = ids[:n]
		slices.Sort(ids)
		for _, id := range ids {
			for _, ns := range nss {
				if ns != "" && rng.IntN(3) != 0 {
					continue
				}
				v := s.NextVersion("")
				cp := &checkpointer.Checkpoint{V: 4, ID: id, TS: time.Now(),
					ChannelValues: map[string]any{"x": 1.0}, ChannelVersions: map[string]string{"x": v}}
				if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
				all = append(all, scanItem{thread, ns, id})
			}
		}
	}
	slices.SortFunc(all, func(a, b scanItem) int {
		return cmp.Or(cmp.Compare(b.id, a.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns))
	})
	root := ""
	sub := "a"
	for _, q := range []checkpointer.DriverQuery{
		{}, {Limit: 1}, {Limit: 7}, {Limit: 300}, {Limit: 100000},
		{NS: &root}, {NS: &root, Limit: 9}, {NS: &sub, Limit: 50},
		{Before: pool[200]}, {Before: pool[200], Limit: 33}, {NS: &sub, Before: pool[300], Limit: 5},
		{ID: pool[100]}, {ID: pool[100], Limit: 2}, {NS: &root, ID: pool[100]},
		{Thread: "thread-00"}, {Thread: "thread-00", Limit: 3}, {Thread: "thread-00", Before: pool[390], Limit: 300},
	} {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			var want []scanItem
			for _, it := range all {
				if (q.Thread == "" || it.thread == q.Thread) && (q.NS == nil || it.ns == *q.NS) &&
					(q.ID == "" || it.id == q.ID) && (q.Before == "" || it.id < q.Before) {
					want = append(want, it)
				}
			}
			if q.Limit > 0 && len(want) > q.Limit {
				want = want[:q.Limit]
			}
			var got []scanItem
			for st, err := range s.d.Scan(ctx, q) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, scanItem{st.Thread, st.NS, st.ID})
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %d items, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			// What the merge holds: at most the first batches
			// (scanFillBudget, or scanBatchMin a thread) and a few
			// batches read since — not every id, as the whole sort did.
			var threadList []string
			if q.Thread != "" {
				threadList = []string{q.Thread}
			} else {
				threadList, err = s.d.rdb.ZRange(ctx, s.d.threadsKey(), 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
			}
			m, err := s.d.newScanMerge(ctx, threadList, q)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				if err := m.fill(ctx); err != nil {
					t.Fatal(err)
				}
				if _, ok := m.next(); !ok {
					break
				}
				m.pop()
				n++
			}
			if n != len(want) {
				t.Fatalf("the merge gave %d, want %d", n, len(want))
			}
			bound := max(scanFillBudget, scanBatchMin*len(threadList)) + 2*scanBatchMax
			if q.Limit > 0 {
				// Or the limit a thread, and the other namespaces
				// of its last id (read whole).
				bound = min(bound, len(threadList)*(q.Limit+len(nss)-1))
			}
			if m.maxHeld > bound {
				t.Errorf("the merge held %d ids at once, want at most %d (%d listed of %d)", m.maxHeld, bound, n, len(all))
			}
			t.Logf("%d listed, at most %d ids held", n, m.maxHeld)
		})
	}
}

func firstDiff(a, b []scanItem) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
