package pgaudit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestFailedAppendLeavesNoTransaction: an append that fails after its
// transaction began — its chain refuses, or its rows break the table's
// key — stores nothing and gives its connection back to the pool outside
// any transaction (not holding the append lock, not aborted), and the next
// append works.
func TestFailedAppendLeavesNoTransaction(t *testing.T) {
	ctx := t.Context()
	pool := pgtest.Pool(t)
	tb, err := pgaudit.New(pool, pgaudit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := audittest.KillTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Log(ctx, audit.OpItemWrite, "first", "", ""); err != nil {
		t.Fatal(err)
	}
	idle := func(what string) {
		t.Helper()
		for _, c := range pool.AcquireAllIdle(ctx) {
			st := c.Conn().PgConn().TxStatus()
			c.Release()
			if st != 'I' {
				t.Fatalf("after %s, a connection went back to the pool in transaction state %q", what, st)
			}
		}
	}
	errChain := errors.New("chain refused")
	if err := tb.Append(ctx, func(*audit.Record) ([]audit.Record, error) { return nil, errChain }); !errors.Is(err, errChain) {
		t.Fatalf("Append of a refusing chain = %v", err)
	}
	idle("a refused chain")
	dup := func(last *audit.Record) ([]audit.Record, error) {
		// Record 1 again: the primary key refuses it.
		return []audit.Record{{Seq: last.Seq, Time: time.Now(), Op: "x", Link: strings.Repeat("0", 64), MAC: "m"}}, nil
	}
	if err := tb.Append(ctx, dup); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("Append of a duplicate record = %v, want the key's violation", err)
	}
	idle("a failed insert")
	if err := tr.Log(ctx, audit.OpItemWrite, "second", "", ""); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 2 {
		t.Fatalf("Verify = %d, %v; want 2", n, err)
	}
}
