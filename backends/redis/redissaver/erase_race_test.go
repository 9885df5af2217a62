package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// raceSpec tells TestHelperEraseRaceWriter where to write, and how many
// bytes to add to each value (Pad: 8 KB takes the large path of puts and
// pending writes).
type raceSpec struct {
	Addr, Prefix, KeyFile string
	Pad                   int
}

// stalledTable is a key table whose key checks return late: the writer
// stalls between its fence check and its write, as any process may (a
// pause, a slow network, a busy machine), which is the window an erasure
// must close.
type stalledTable struct{ *sqlitekeys.Table }

func (s stalledTable) LiveKey(ctx context.Context, subject, keyID string) (bool, error) {
	live, err := s.Table.LiveKey(ctx, subject, keyID)
	time.Sleep(100 * time.Millisecond)
	return live, err
}

// TestHelperEraseRaceWriter is the other process of TestEraseRace: it
// writes checkpoints and pending writes of subject carol's threads in a
// loop until stdin closes, says "writing" after its first put, and prints
// how many writes were stored and refused.
func TestHelperEraseRaceWriter(t *testing.T) {
	var spec raceSpec
	if !childproc.Arg(t, &spec) {
		t.Skip("the other process of TestEraseRace")
	}
	ctx := context.Background()
	table, err := sqlitekeys.Open(ctx, spec.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = table.Close() }()
	h := keystest.NewHierarchy(t, stalledTable{table}, keys.Subjects{ThreadSeparator: "-"})
	rdb := redis.NewClient(&redis.Options{Addr: spec.Addr})
	defer func() { _ = rdb.Close() }()
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: spec.Prefix, Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	done := childproc.StdinClosed()
	pad := strings.Repeat(".", spec.Pad)
	stored, refused := 0, 0
	for n := 0; ; n++ {
		select {
		case <-done:
			childproc.Say("stored %d refused %d", stored, refused)
			return
		default:
		}
		thread := fmt.Sprintf("carol-%d", n%3)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
			ChannelValues:   map[string]any{"notes": "carol is allergic to peanuts" + pad},
			ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
		cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
		if err == nil {
			err = s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "takes insulin" + pad}}, "task", "")
		}
		switch {
		case err == nil:
			if stored == 0 {
				childproc.Say("writing")
			}
			stored++
		case errors.Is(err, keys.ErrSubjectErased):
			if refused == 0 {
				childproc.Say("refused")
			}
			refused++
		default:
			t.Fatal(err)
		}
	}
}

// TestEraseRace: while another process writes a subject's checkpoints and
// pending writes in a loop, an erasure (destroy the keys, drain the
// writes, delete the subject's threads — as vault.Handle.ForgetWith)
// leaves nothing of the subject behind: no key of its threads appears
// afterwards. A write that checked its key before the destruction and
// ran its script after the deletion would bring a sealed value back.
// "large": values and writes of 8 KB more, on the large path (a
// MULTI/EXEC whose check, refused by the fence, poisons the key the
// values go to).
func TestEraseRace(t *testing.T) {
	t.Run("small", func(t *testing.T) { eraseRace(t, 0) })
	t.Run("large", func(t *testing.T) { eraseRace(t, 8<<10) })
}

// eraseRace is TestEraseRace with pad bytes added to every value.
func eraseRace(t *testing.T, pad int) {
	srv := redistest.Shared(t, 8)
	prefix := redistest.Prefix()
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "keys.db")
	table, err := sqlitekeys.Open(ctx, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = table.Close() })
	h := keystest.NewHierarchy(t, table, keys.Subjects{ThreadSeparator: "-"})
	rdb := srv.Client(t)
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix, Serde: h})
	if err != nil {
		t.Fatal(err)
	}

	child := childproc.Start(t, "TestHelperEraseRaceWriter", raceSpec{Addr: srv.Addr, Prefix: prefix, KeyFile: keyFile, Pad: pad})
	if line := <-child.Lines; line != "writing" {
		t.Fatalf("the writer process: %q", line)
	}

	// The erasure, step by step as vault.Handle.ForgetWith runs it.
	if _, err := h.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if d, ok := any(s).(interface{ DrainWrites(context.Context) error }); ok {
		if err := d.DrainWrites(ctx); err != nil {
			t.Fatal(err)
		}
	}
	threads := []string{"carol-0", "carol-1", "carol-2"}
	for _, th := range threads {
		if err := s.DeleteThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}

	// The writer goes on (its writes now refused); nothing may appear.
	// Watched until the writer says it was refused — its writes went on
	// through the erasure — and 20 polls at least: a fixed second of
	// polls could end, on a loaded machine, before the writer's first
	// write after the erasure (each stalls 100 ms on its key check).
	refusedSaid, early := child.PollUntil("refused", 20, 50*time.Millisecond, 2*time.Minute, func() {
		ks, err := rdb.Keys(ctx, prefix+":{carol-*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) > 0 {
			t.Fatalf("after the erasure, another process stored keys of the erased subject: %v", ks)
		}
		for _, th := range threads {
			tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: th})
			if err == nil && tup != nil {
				t.Fatalf("after the erasure, thread %s holds checkpoint %s", th, tup.Checkpoint.ID)
			}
		}
	})
	err = child.Wait()
	lines := early
	for line := range child.Lines {
		lines = append(lines, line)
	}
	rest := strings.Join(lines, "\n")
	if err != nil {
		t.Fatalf("the writer process: %v\n%s", err, rest)
	}
	// A put refused by the fence takes its thread out of the index
	// again before it returns: once the writer has stopped, the index
	// names no thread of the subject.
	for _, th := range threads {
		if err := rdb.ZScore(ctx, prefix+":threads", th).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("after the erasure, the thread index names %s (%v)", th, err)
		}
	}
	var stored, refused int
	if _, err := fmt.Sscanf(rest, "stored %d refused %d", &stored, &refused); err != nil || refused == 0 || !refusedSaid {
		t.Fatalf("the writer process: %q (%v): it must have gone on writing through the erasure", rest, err)
	}
	t.Logf("writer: %d stored before the erasure, %d refused after", stored, refused)
}
