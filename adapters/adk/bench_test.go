package adk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/store"
)

// benchSizes are the session lengths BenchmarkAppendEvent appends to:
// 10 events, and MEMVAULT_ADK_BENCH_EVENTS (say 5000) when set — filling a
// long session first takes a while, so it is not in the default run.
func benchSizes(b *testing.B) []int {
	sizes := []int{10}
	if v := os.Getenv("MEMVAULT_ADK_BENCH_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MEMVAULT_ADK_BENCH_EVENTS=%q: want a positive number", v)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkAppendEvent measures AppendEvent on one session that 1, 4 or 16
// writers share, each with its own service on its own store handle (the
// same SQLite file, the same PostgreSQL schema), the session holding
// about `events` events when timing starts (it grows by the appends
// timed). A writer whose handle went stale
// (ErrStaleSession) gets the session again with NumRecentEvents 1, as a
// runner that only needs the latest state would, and retries; the
// retries/append metric counts those. Run it with a fixed count
// (-benchtime=200x) so that every size compares like for like.
func BenchmarkAppendEvent(b *testing.B) {
	for _, bk := range adaptertest.Backends(b, adaptertest.Options{Plaintext: true}) {
		if bk.Name == "memory" {
			continue
		}
		b.Run(bk.Name, func(b *testing.B) {
			for _, size := range benchSizes(b) {
				for _, writers := range []int{1, 4, 16} {
					b.Run(fmt.Sprintf("events=%d/writers=%d", size, writers), func(b *testing.B) {
						benchAppend(b, bk, size, writers)
					})
				}
			}
		})
	}
}

var benchRun atomic.Int64

func benchAppend(b *testing.B, bk adaptertest.Backend, size, writers int) {
	ctx := context.Background()
	prefix := store.Namespace{"bench", fmt.Sprintf("r%d", benchRun.Add(1))}
	services := make([]*adk.SessionService, writers)
	for i := range services {
		svc, err := adk.NewSessionService(bk.Store(b), adk.Options{Prefix: prefix})
		if err != nil {
			b.Fatal(err)
		}
		services[i] = svc
	}
	// The session is written as versions before per-event items stored
	// it (one item holding all its events), which every version reads:
	// appending `size` events one by one to fill it would take the old
	// layout minutes. One append, untimed, then stores it as the code
	// under test does.
	var events []*session.Event
	t0 := time.Now().Add(-time.Hour)
	for i := range size {
		ev := benchEvent(0, i)
		ev.Timestamp = t0.Add(time.Duration(i) * time.Millisecond)
		events = append(events, ev)
	}
	js, err := json.Marshal(events)
	if err != nil {
		b.Fatal(err)
	}
	st := bk.Store(b)
	err = st.Put(ctx, append(prefix, "app", "sessions", "u"), "s", map[string]any{
		"rev": int64(size + 1), "updated_ns": t0.UnixNano(), "state": map[string]any{}, "events": js,
	})
	if err != nil {
		b.Fatal(err)
	}
	g, err := services[0].Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s", NumRecentEvents: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := services[0].AppendEvent(ctx, g.Session, benchEvent(0, size)); err != nil {
		b.Fatal(err)
	}
	var retries atomic.Int64
	per := max(b.N/writers, 1)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			r, err := appendEvents(ctx, services[w], "u", "s", per, func(i int) *session.Event { return benchEvent(w+1, i) })
			retries.Add(int64(r))
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	n := per * writers
	b.ReportMetric(float64(n)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(retries.Load())/float64(n), "retries/append")
}

// benchEvent is a typical small event: a line of text and a state change.
func benchEvent(writer, i int) *session.Event {
	ev := session.NewEventWithContext(context.Background(), fmt.Sprintf("inv-%d", writer))
	ev.Author = "user"
	ev.Content = genai.NewContentFromText(fmt.Sprintf("writer %d says hello for the %dth time, with a few more words to look like a turn", writer, i), genai.RoleUser)
	ev.Actions.StateDelta = map[string]any{fmt.Sprintf("w%d", writer): i}
	return ev
}
