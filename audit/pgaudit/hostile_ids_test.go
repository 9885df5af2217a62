package pgaudit_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// hostileTrail is an audit trail in a PostgreSQL table.
func hostileTrail(t *testing.T) *audit.Trail {
	t.Helper()
	tb, err := pgaudit.New(pgtest.Pool(t), pgaudit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	tr, err := audit.NewTrail(tb, audit.Options{Key: []byte("0123456789abcdef0123456789abcdef"), DatabaseID: "review"})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestAuditedBadIDsGetTheirSentinel: a key or thread id holding a NUL byte
// or invalid UTF-8 gets, through the audited decorators, the sentinel the
// store or saver gives it (store.ErrInvalidKey, checkpointer.ErrInvalidID)
// and no record: the decorators appended the read's record first and the
// caller got PostgreSQL's encoding error.
func TestAuditedBadIDsGetTheirSentinel(t *testing.T) {
	ctx := t.Context()
	tr := hostileTrail(t)
	ms, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := audit.NewStore(ms, tr, nil)
	for _, key := range []string{"k\x00", "k\xff"} {
		if _, err := st.Get(ctx, store.Namespace{"users"}, key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("audited Get(key %q): %v, want store.ErrInvalidKey", key, err)
		}
	}
	mv, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sv := audit.NewSaver(mv, tr, nil)
	for _, id := range []string{"t\x00", "t\xff"} {
		if _, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: id}); !errors.Is(err, checkpointer.ErrInvalidID) {
			t.Errorf("audited GetTuple(thread %q): %v, want checkpointer.ErrInvalidID", id, err)
		}
	}
}

// TestGroupCommitHostileIDFailsOnlyItself: a read with an id PostgreSQL's
// text cannot hold fails alone, before its record joins a group commit;
// it failed every concurrent, valid caller sharing its transaction.
func TestGroupCommitHostileIDFailsOnlyItself(t *testing.T) {
	ctx := t.Context()
	tr := hostileTrail(t)
	ms, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := audit.NewStore(ms, tr, nil)
	ns := store.Namespace{"users"}
	if err := st.Put(ctx, ns, "ok", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	const rounds, valid = 20, 40
	var failed []string
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range valid + 1 {
			wg.Go(func() {
				key := "ok"
				if i == valid/2 {
					key = "evil\x00"
				}
				_, err := st.Get(ctx, ns, key)
				if key == "ok" && err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("round %d, caller %d: %v", round, i, err))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(failed) > 0 {
			t.Fatalf("%d valid reads failed because a hostile read shared their audit commit; first: %s", len(failed), failed[0])
		}
	}
}

// TestHugeReadIDBounded: reads do not bound an id's length (writes do),
// and a read's record names its id: a record keeps at most
// audit.MaxTargetBytes of it, with its length and hash, so a caller who
// picks ids cannot grow the append-only trail by megabytes per read.
func TestHugeReadIDBounded(t *testing.T) {
	ctx := t.Context()
	tr := hostileTrail(t)
	mv, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sv := audit.NewSaver(mv, tr, nil)
	huge := strings.Repeat("t", 8<<20)
	tu, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: huge})
	t.Logf("GetTuple(8 MiB thread id): %v, %.200v", tu, err)
	ms, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := audit.NewStore(ms, tr, nil)
	_, err = st.Get(ctx, store.Namespace{"users"}, huge)
	t.Logf("Get(8 MiB key): %.200v", err)
	total := 0
	if err := tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		total += len(r.Target)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const bound = 64 << 10
	if total > bound {
		t.Fatalf("two reads of ids over the %d-byte limit (which no write can store) added %d bytes of targets to the append-only trail (want at most %d)", checkpointer.MaxIDBytes, total, bound)
	}
}
