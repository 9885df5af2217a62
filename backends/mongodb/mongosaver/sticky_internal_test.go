package mongosaver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestIdleLetGoDoesNotOverlapATaking: the renewer lets go of a lease a
// put kept once it has been idle (sticky.go), deleting its document. A
// write or an Update of the same process taking that thread's lease at
// that moment must not send its acquisition while the deletion is under
// way: a server whose findAndModify finds, then updates by _id, as
// FerretDB's does, answers the taking as done though the deletion
// removed the document, and the taker goes on holding no lease — the
// renewer then finds it lost and stops the put with ErrLockLost (a
// conformance run failed so: Resume/race_with_sweep). Here the renewer
// is held just before its deletion while a put, then a removal, of the
// thread start; neither may send its acquisition until the renewer let
// go, and both succeed. The renewer is held until the taker is seen
// sending its acquisition or waiting for the thread's in-process lock.
func TestIdleLetGoDoesNotOverlapATaking(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, s *Saver, cfg checkpointer.Config) error
	}{
		{"put", func(ctx context.Context, s *Saver, cfg checkpointer.Config) error {
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
				ChannelValues: map[string]any{"note": "b"}, ChannelVersions: map[string]string{"note": "2"}}
			_, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{}, map[string]string{"note": "2"})
			return err
		}},
		{"removal", func(ctx context.Context, s *Saver, cfg checkpointer.Config) error {
			return s.DeleteThread(ctx, cfg.ThreadID)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := New(mongotest.Database(t), Options{LeaseTTL: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			const thread = "idle"
			var (
				mu       sync.Mutex
				letting  bool // the renewer is between its decision and its deletion
				overlaps int
				took     = make(chan struct{}, 16)
				idle     = make(chan struct{})
				once     sync.Once
			)
			s.d.leases.hook = func(at, th string) {
				if th != thread {
					return
				}
				switch at {
				case "take":
					mu.Lock()
					if letting {
						overlaps++
					}
					mu.Unlock()
					took <- struct{}{}
				case "idle":
					first := false
					once.Do(func() { first = true })
					if !first {
						return
					}
					mu.Lock()
					letting = true
					mu.Unlock()
					close(idle)
					// The taker starts now. Hold the renewer here until
					// the taker is seen either sending its acquisition
					// (took: the overlap, as before the fix) or waiting
					// for the thread's in-process lock, which the
					// renewer holds while it lets go (a second holder
					// or waiter of it: the fix) - no time given to it.
					deadline := time.Now().Add(time.Minute)
					for seen := false; !seen; {
						select {
						case <-took:
							seen = true
						default:
							s.d.leases.mu.Lock()
							ll := s.d.leases.local[thread]
							seen = ll != nil && ll.n >= 2
							s.d.leases.mu.Unlock()
							if !seen {
								if time.Now().After(deadline) {
									t.Errorf("the %s neither took the lease nor waited for the thread's in-process lock in a minute", tc.name)
									seen = true
								}
								time.Sleep(time.Millisecond)
							}
						}
					}
					mu.Lock()
					letting = false
					mu.Unlock()
				}
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
				ChannelValues: map[string]any{"note": "a"}, ChannelVersions: map[string]string{"note": "1"}}
			cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			<-took // the first put's own taking
			select {
			case <-idle:
			case <-time.After(time.Minute):
				t.Fatal("the renewer never let go of the idle lease")
			}
			if err := tc.run(ctx, s, cfg); err != nil {
				t.Fatalf("%s while the renewer lets go of the lease: %v", tc.name, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if overlaps > 0 {
				t.Errorf("the %s sent its lease acquisition while the renewer was letting go of the same lease", tc.name)
			}
		})
	}
}
