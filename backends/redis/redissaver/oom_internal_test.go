package redissaver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestScriptOOM: what a server out of memory (maxmemory, noeviction) does
// to a write's script. Redis refuses a script's write for memory only if
// it is the script's first write (a script already writing goes on past
// maxmemory, to stay atomic), and every script here reads and checks
// before its first write: puts of 1 MiB go in whole until one fails with
// OOM, storing nothing. A commit is never partial.
func TestScriptOOM(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			srv := redistest.StartT(t, redistest.Options{Version: v, Args: []string{"--maxmemory-policy", "noeviction"}})
			rdb := srv.Client(t)
			ctx := context.Background()
			s, err := New(rdb, Options{Prefix: "oom"})
			if err != nil {
				t.Fatal(err)
			}
			big := strings.Repeat("x", 100<<10)
			values := map[string]any{}
			versions := map[string]string{}
			for i := range 10 {
				ch := "c" + strconv.Itoa(i)
				values[ch], versions[ch] = big, s.NextVersion("")
			}
			put := func(thread string) error {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(), ChannelValues: values, ChannelVersions: versions}
				_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, versions)
				return err
			}
			// Load the scripts first: loading one takes memory too.
			if err := put("warm"); err != nil {
				t.Fatal(err)
			}
			info, err := rdb.Info(ctx, "memory").Result()
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for _, line := range strings.Split(info, "\r\n") {
				if n, ok := strings.CutPrefix(line, "used_memory:"); ok {
					used, _ = strconv.Atoi(n)
				}
			}
			// Puts of 1 MiB each until the server refuses one: each is
			// stored whole or not at all.
			if err := rdb.ConfigSet(ctx, "maxmemory", strconv.Itoa(used+4<<20)).Err(); err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				if i == 50 {
					t.Fatal("50 MiB of puts fitted in 4 MiB of headroom")
				}
				th := "t" + strconv.Itoa(i)
				err := put(th)
				if err != nil {
					if !strings.Contains(err.Error(), "OOM") {
						t.Fatalf("a put over maxmemory: %v, want an OOM error", err)
					}
					if n, err := rdb.Exists(ctx, s.d.keys(th).fixed()...).Result(); err != nil || n != 0 {
						t.Fatalf("the refused put left %d keys (%v)", n, err)
					}
					if tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: th}); err != nil || tup != nil {
						t.Fatalf("the refused put reads as %v, %v", tup, err)
					}
					t.Logf("put %d refused: %v", i, err)
					break
				}
				if n, err := rdb.HLen(ctx, s.d.keys(th).val).Result(); err != nil || n != 10 {
					t.Fatalf("put %d stored %d of its 10 values (%v)", i, n, err)
				}
			}
		})
	}
}
