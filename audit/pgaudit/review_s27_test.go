package pgaudit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// auditedStoreOnPool is a pgstore on a pool of size conns, audited in a
// trail of the same schema (records of reads pending, as the vault has).
func auditedStoreOnPool(t *testing.T, conns int32) (store.Store, *audit.Trail, *pgxpool.Pool, func(t *testing.T, target string)) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	inner, err := pgstore.New(pool, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := inTx(t, pool)
	return audit.NewStore(inner, e.Trail, nil), e.Trail, pool, e.RefuseRecords
}

// TestReviewS27AuditedStoreReadsPoolOfOne (session 27 review): audited
// Get, Search and ListItems, eight at a time on a pool of one connection,
// all finish (a read that held its connection while it waited for its
// record, whose INSERT needs a connection of the same pool, would wait
// for ever, as session 26's listings did).
func TestReviewS27AuditedStoreReadsPoolOfOne(t *testing.T) {
	st, _, _, _ := auditedStoreOnPool(t, 1)
	ctx, cancel := context.WithTimeout(audit.WithPrincipal(t.Context(), "reader"), 30*time.Second)
	defer cancel()
	ns := store.Namespace{"users", "carol"}
	for _, k := range []string{"a", "b", "c"} {
		if err := st.Put(ctx, ns, k, map[string]any{"v": k}); err != nil {
			t.Fatal(err)
		}
	}
	lister, ok := st.(store.Lister)
	if !ok {
		t.Fatalf("%T does not list items", st)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make(chan error, 24)
		for range 8 {
			wg.Go(func() {
				if _, err := st.Get(ctx, ns, "a"); err != nil {
					errs <- err
				}
			})
			wg.Go(func() {
				if _, err := st.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Limit: 10}); err != nil {
					errs <- err
				}
			})
			wg.Go(func() {
				if _, err := lister.ListItems(ctx, ns, store.ListItemsOptions{Limit: 10}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: audited store reads on a pool of 1: %v", round, err)
		}
	}
}

// TestReviewS27AuditedStoreReadRefused: a store read (Get, Search,
// ListItems) whose record the database refuses returns no item, only the
// error, and the trail stays whole.
func TestReviewS27AuditedStoreReadRefused(t *testing.T) {
	st, tr, pool, refuse := auditedStoreOnPool(t, 4)
	ctx := audit.WithPrincipal(t.Context(), "reader")
	ns := store.Namespace{"users", "carol"}
	if err := st.Put(ctx, ns, "diet", map[string]any{"v": "secret"}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	refuse(t, "users.carol/diet")
	refuse(t, "users.carol")
	refuse(t, "users")
	if it, err := st.Get(ctx, ns, "diet"); err == nil || it != nil {
		t.Errorf("Get whose record is refused = %v, %v; want no item and an error", it, err)
	}
	if its, err := st.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Limit: 10}); err == nil || len(its) != 0 {
		t.Errorf("Search whose record is refused = %d items, %v; want none and an error", len(its), err)
	}
	if its, err := st.(store.Lister).ListItems(ctx, ns, store.ListItemsOptions{Limit: 10}); err == nil || len(its) != 0 {
		t.Errorf("ListItems whose record is refused = %d items, %v; want none and an error", len(its), err)
	}
	// A read-only Batch appends its records to the chain itself (LogAll):
	// refuse them there too.
	if _, err := pool.Exec(ctx, `ALTER TABLE memvault_audit ADD CONSTRAINT refuse_chain CHECK (target <> 'users.carol/diet') NOT VALID`); err != nil {
		t.Fatal(err)
	}
	res, err := st.Batch(ctx, []store.Op{store.GetOp{Namespace: ns, Key: "diet"}})
	if err == nil {
		t.Errorf("a read-only Batch whose record is refused = %+v; want an error", res)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReviewS27ReadOnlyBatchWaitsForChain (session 27 review): README
// ("Audited reads and store writes"): "Reads take no trail lock and never
// wait for the chain". A store Batch that only reads (GetOp, SearchOp)
// does not queue its records as pending ones, as Get and Search do: it
// appends them to the chain (Trail.LogAll), so while the chain is locked
// (another process's appender, a long chaining) it waits, where a Get of
// the same item returns at once.
func TestReviewS27ReadOnlyBatchWaitsForChain(t *testing.T) {
	st, tr, pool, _ := auditedStoreOnPool(t, 4)
	ctx := audit.WithPrincipal(t.Context(), "reader")
	ns := store.Namespace{"users", "carol"}
	if err := st.Put(ctx, ns, "diet", map[string]any{"v": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// As inTx's BlockChain: readers of the chain go on, inserters wait.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE memvault_audit IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// A guard, not a figure of speed: a read that waits for the locked
	// chain ends here.
	guard, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if it, err := st.Get(guard, ns, "diet"); err != nil || it == nil {
		t.Fatalf("Get while the chain is locked: %v, %v", it, err)
	}
	if _, err := st.Batch(guard, []store.Op{store.GetOp{Namespace: ns, Key: "diet"}}); err != nil {
		t.Fatalf("a read-only Batch (one GetOp) while the chain is locked: %v; a Get of the same item returned at once", err)
	}
}
