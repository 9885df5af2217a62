package vault

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/keys"
)

// TestReviewS23OpenDuringForgetRefused (session 23 review):
// checkKeyErasures reads the key table's count, then the database's mark,
// in two reads of two databases. A Forget by another process that counts
// its erasure and advances the mark between them leaves the opening
// process with have < seen, and a rightful process on the one key table
// is refused with ErrSubjectsChanged — "a copy or a backup of the key
// table taken before an erasure … never copy a live key table" — while
// an erasure runs. A race by nature: the test repeats opens beside a
// stream of Forgets (of subjects without keys: each still counts) and
// fails on the first refusal.
func TestReviewS23OpenDuringForgetRefused(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load() && i < 400; i++ {
			if _, err := h.ForgetWith(ctx, fmt.Sprintf("s%d", i), ForgetOptions{Wait: 10 * time.Second}); err != nil && !errors.Is(err, keys.ErrErasurePending) {
				t.Errorf("forget: %v", err)
				return
			}
		}
	}()
	var refused error
	for i := 0; i < 300 && refused == nil; i++ {
		o, err := Open(ctx, c)
		switch {
		case err == nil:
			o.Close()
		case errors.Is(err, ErrSubjectsChanged):
			refused = err
		default:
			t.Errorf("open: %v", err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if refused != nil {
		t.Fatalf("a process opening the database with the key table the erasures run on, while another forgets, is refused: %v", refused)
	}
}

// TestReviewS23ConcurrentForgetsRefused (session 23 review): the same
// two reads in ForgetWith, right after StartErasure destroyed the keys:
// two processes forgetting two subjects at once (an erasure queue worked
// by two workers) — one reads the key table's count, the other counts
// and advances the mark, the first reads the mark — and the first Forget
// fails half-way ("keys destroyed; … it is a copy or a backup of the key
// table"), its subject's rows not deleted until a rerun. A race by nature:
// the test runs two streams of Forgets and fails on the first refusal.
func TestReviewS23ConcurrentForgetsRefused(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	var refused atomic.Value
	var wg sync.WaitGroup
	for w := range 2 {
		h, err := Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 150 && refused.Load() == nil; i++ {
				_, err := h.ForgetWith(ctx, fmt.Sprintf("w%d-s%d", w, i), ForgetOptions{Wait: 10 * time.Second})
				switch {
				case errors.Is(err, ErrSubjectsChanged):
					refused.Store(err)
				case err != nil && !errors.Is(err, keys.ErrErasurePending):
					t.Errorf("forget: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := refused.Load().(error); err != nil {
		t.Fatalf("two processes forgetting two subjects at once, on the one key table: a Forget failed half-way: %v", err)
	}
}
