package redissaver_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// doneRecorder is a go-redis hook recording whether each command ran
// with a context that can be cancelled: a call run in a goroutine of its
// own (await) passes the caller's context; one run in the caller's
// goroutine (the default) passes it without its Done channel.
type doneRecorder struct {
	mu       sync.Mutex
	withDone int
	without  int
}

func (r *doneRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *doneRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		if ctx.Done() != nil {
			r.withDone++
		} else {
			r.without++
		}
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (r *doneRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCallerGoroutine: by default a put and a read run their commands in
// the caller's goroutine (the commands see a context without a Done
// channel), and a call to a server that stops answering still ends, at
// its context's deadline; with Options.ReturnOnCancel they run in a
// goroutine of their own, with the caller's context.
func TestCallerGoroutine(t *testing.T) {
	srv := redistest.Shared(t, 8)
	for _, inline := range []bool{false, true} {
		f := newFreezer(t, srv.Addr)
		rdb := redis.NewClient(&redis.Options{Addr: f.l.Addr().String(), ContextTimeoutEnabled: true, ReadTimeout: -1})
		t.Cleanup(func() { _ = rdb.Close() })
		rec := &doneRecorder{}
		rdb.AddHook(rec)
		s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix(), ReturnOnCancel: !inline})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cfg := checkpointer.Config{ThreadID: "inline"}
		cp := newCheckpoint(s, 0)
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if tup, err := s.GetTuple(ctx, cfg); err != nil || tup == nil {
			t.Fatalf("read: %+v, %v", tup, err)
		}
		cancel()
		if inline && (rec.without == 0 || rec.withDone != 0) || !inline && rec.withDone == 0 {
			t.Errorf("caller goroutine %v: %d commands with a cancellable context, %d without", inline, rec.withDone, rec.without)
		}
		f.freeze()
		dctx, dcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err = s.GetTuple(dctx, cfg)
		dcancel()
		if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			t.Errorf("caller goroutine %v: a read of a server that does not answer, past its deadline: %v", inline, err)
		}
	}
}

// isTimeout reports whether err is a network time-out (go-redis ends a
// command at the context's deadline with one).
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
