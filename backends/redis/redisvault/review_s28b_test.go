package redisvault_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/backends/redis/redisvault"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/vault"
)

// TestS28bCopyAcrossSubjectsRefusedOnRedis is vault's
// TestCopyAcrossSubjectsRefused on Redis (one server and a cluster),
// with pending writes in the source: a copy of carol:1 to dave:copy or
// to a thread of no subject is refused with keys.ErrSubjectMismatch and
// leaves no key of the destination (no lock, no hold key, no index
// entry); a copy within carol's threads runs, and Forget(carol) leaves
// nothing of hers.
func TestS28bCopyAcrossSubjectsRefusedOnRedis(t *testing.T) {
	for _, mode := range []string{"single", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			var rdb redis.UniversalClient
			if mode == "single" {
				rdb = redistest.Shared(t, 8).Client(t)
			} else {
				rdb = redistest.StartCluster(t, 8).Client(t)
			}
			prefix := redistest.Prefix()
			hier := keystest.NewHierarchy(t, memkeys.New(), keys.Subjects{ThreadSeparator: ":"})
			sv, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix, Serde: hier})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sv.Close() }()
			h := &vault.Handle{Backend: redisvault.Name, Saver: sv, Serde: hier, Keys: hier}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
				ChannelValues:   map[string]any{"notes": "carol notes"},
				ChannelVersions: map[string]string{"notes": sv.NextVersion("")}}
			cfg, err := sv.Put(ctx, checkpointer.Config{ThreadID: "carol:1"}, cp, nil, cp.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			if err := sv.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "carol pending"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			for _, dst := range []string{"dave:copy", "shared-copy"} {
				if err := sv.CopyThread(ctx, "carol:1", dst); !errors.Is(err, keys.ErrSubjectMismatch) {
					t.Fatalf("CopyThread(carol:1, %s) = %v, want keys.ErrSubjectMismatch", dst, err)
				}
				if n := threadKeys(t, rdb, prefix, dst); n != 0 {
					t.Errorf("the refused copy to %s left %d keys", dst, n)
				}
				if n := threadKeys(t, rdb, prefix, "carol:1"); n == 0 {
					t.Errorf("the refused copy to %s took carol:1's keys", dst)
				}
				for th, err := range sv.RowThreadIDs(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					if th == dst {
						t.Errorf("the refused copy to %s left it listed", dst)
					}
				}
			}
			if err := sv.CopyThread(ctx, "carol:1", "carol:2"); err != nil {
				t.Fatal(err)
			}
			if tup, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"}); err != nil || tup == nil || tup.Checkpoint.ChannelValues["notes"] != "carol notes" {
				t.Fatalf("carol:2 = %v, %v", tup, err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"carol:1", "carol:2"} {
				if n := threadKeys(t, rdb, prefix, th); n != 0 {
					t.Errorf("%d keys of %s after Forget(carol)", n, th)
				}
			}
		})
	}
}
