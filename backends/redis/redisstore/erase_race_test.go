package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/store"
)

// raceSpec tells TestHelperEraseRaceWriter where to write.
type raceSpec struct{ Addr, Prefix, KeyFile string }

// stalledTable is a key table whose key checks return late: the writer
// stalls between its fence check and its commit, the window an erasure
// must close.
type stalledTable struct{ *sqlitekeys.Table }

func (s stalledTable) LiveKey(ctx context.Context, subject, keyID string) (bool, error) {
	live, err := s.Table.LiveKey(ctx, subject, keyID)
	time.Sleep(100 * time.Millisecond)
	return live, err
}

var carol = store.Namespace{"users", "carol", "notes"}

// TestHelperEraseRaceWriter is the other process of TestEraseRace: it
// puts items of subject carol in a loop until stdin closes, says
// "writing" after its first put, and prints how many were stored and
// refused.
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
	h := keystest.NewHierarchy(t, stalledTable{table}, keys.Subjects{NamespacePrefix: []string{"users"}})
	rdb := redis.NewClient(&redis.Options{Addr: spec.Addr})
	defer func() { _ = rdb.Close() }()
	s, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: spec.Prefix, Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	done := childproc.StdinClosed()
	stored, refused := 0, 0
	for n := 0; ; n++ {
		select {
		case <-done:
			childproc.Say("stored %d refused %d", stored, refused)
			return
		default:
		}
		err := s.Put(ctx, carol, fmt.Sprintf("k%d", n%3), map[string]any{"text": "carol is allergic to peanuts"})
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

// TestEraseRace: while another process puts a subject's items in a loop,
// an erasure (destroy the keys, drain the writes, delete the subject's
// namespace — as vault.Handle.ForgetWith) leaves no item of the subject
// behind. The store's writes check the fence holding the store's lock,
// which DrainWrites takes once.
func TestEraseRace(t *testing.T) {
	srv := redistest.Shared(t, 8)
	prefix := redistest.Prefix()
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "keys.db")
	table, err := sqlitekeys.Open(ctx, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = table.Close() })
	h := keystest.NewHierarchy(t, table, keys.Subjects{NamespacePrefix: []string{"users"}})
	rdb := srv.Client(t)
	s := newStore(t, rdb, redisstore.Options{Prefix: prefix, Serde: h})

	child := childproc.Start(t, "TestHelperEraseRaceWriter", raceSpec{Addr: srv.Addr, Prefix: prefix, KeyFile: keyFile})
	if line := <-child.Lines; line != "writing" {
		t.Fatalf("the writer process: %q", line)
	}

	if _, err := h.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := s.DrainWrites(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePrefix(ctx, store.Namespace{"users", "carol"}); err != nil {
		t.Fatal(err)
	}
	plain := newStore(t, rdb, redisstore.Options{Prefix: prefix})
	// Watched until the writer says it was refused — its writes went on
	// through the erasure — and 20 polls at least: a fixed second of
	// polls could end, on a loaded machine, before the writer's first
	// write after the erasure (each stalls 100 ms on its key check).
	refusedSaid, early := child.PollUntil("refused", 20, 50*time.Millisecond, 2*time.Minute, func() {
		items, err := plain.Search(ctx, store.Namespace{"users", "carol"}, store.SearchOptions{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) > 0 {
			t.Fatalf("after the erasure, another process stored items of the erased subject: %d, first %s", len(items), items[0].Key)
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
	var stored, refused int
	if _, err := fmt.Sscanf(rest, "stored %d refused %d", &stored, &refused); err != nil || refused == 0 || !refusedSaid {
		t.Fatalf("the writer process: %q (%v): it must have gone on writing through the erasure", rest, err)
	}
	t.Logf("writer: %d stored before the erasure, %d refused after", stored, refused)
}
