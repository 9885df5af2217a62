package redissaver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestCancelledPutOutcomeMatchesError (review, session 21; holds): with
// commands in the caller's goroutine (ReturnOnCancel false, the default),
// a put whose context is cancelled while the server is busy (a Lua busy
// loop on another connection, as a slow script of another process) and
// then answers: the put's error tells the truth — nil and stored, or an
// error and nothing stored. Also a put made with a context cancelled
// before the call. On Redis 7 and 8.
func TestCancelledPutOutcomeMatchesError(t *testing.T) {
	const busy = `local s = redis.call('TIME'); local t0 = s[1]*1000000 + s[2]
while true do local n = redis.call('TIME'); if n[1]*1000000 + n[2] - t0 > 400000 then break end end
return 1`
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			srv := redistest.Shared(t, v)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, ReadTimeout: 10 * time.Second, MaxRetries: -1})
			t.Cleanup(func() { _ = rdb.Close() })
			other := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 10 * time.Second})
			t.Cleanup(func() { _ = other.Close() })
			s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
			if err != nil {
				t.Fatal(err)
			}
			bg := context.Background()
			for round := range 4 {
				thread := fmt.Sprint("t", round)
				cfg := checkpointer.Config{ThreadID: thread}
				cp0 := newCheckpoint(s, 0)
				first, err := s.Put(bg, cfg, cp0, checkpointer.Metadata{"step": 0}, cp0.ChannelVersions)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(bg)
				if round == 0 {
					cancel() // cancelled before the call
				} else {
					go func() { _ = other.Eval(bg, busy, nil).Err() }()
					time.Sleep(50 * time.Millisecond) // the server is in the busy loop (no timing asserted)
					go func() { time.Sleep(time.Duration(round) * 60 * time.Millisecond); cancel() }()
				}
				cp1 := newCheckpoint(s, 1)
				_, perr := s.Put(ctx, first, cp1, checkpointer.Metadata{"step": 1}, cp1.ChannelVersions)
				cancel()
				time.Sleep(600 * time.Millisecond) // the busy loop is over
				tu, err := s.GetTuple(bg, checkpointer.Config{ThreadID: thread, CheckpointID: cp1.ID})
				if err != nil {
					t.Fatal(err)
				}
				stored := tu != nil
				t.Logf("round %d: put = %v, stored = %v", round, perr, stored)
				if (perr == nil) != stored {
					t.Errorf("round %d: a cancelled put returned %v and stored = %v", round, perr, stored)
				}
			}
		})
	}
}
