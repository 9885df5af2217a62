package pgaudit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// s29Env is a pgsaver and a trail (WritesInTx, with the data database's
// chain mark: pgaudit.Meta) in one schema.
type s29Env struct {
	pool   *pgxpool.Pool
	schema string // the trail's, named in its Options
	inner  checkpointer.Saver
	tb     *pgaudit.Table
	meta   audit.Meta
	dbID   string
}

func s29Open(t *testing.T) *s29Env {
	t.Helper()
	pool, schema := pgtest.Schema(t)
	return s29OpenOn(t, pool, schema)
}

func s29OpenOn(t *testing.T, pool *pgxpool.Pool, schema string) *s29Env {
	t.Helper()
	ctx := t.Context()
	inner, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	// In the schema, by name: the trail's lock is then the schema's
	// alone (ownTable says why).
	tb, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := pgaudit.DatabaseID(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	return &s29Env{pool: pool, schema: schema, inner: inner, tb: tb, meta: pgaudit.Meta(pool, schema), dbID: id}
}

// trail is a trail of e's table as one process has it.
func (e *s29Env) trail(t *testing.T) (*audit.Trail, checkpointer.Saver) {
	t.Helper()
	tr, err := audit.NewTrail(e.tb, audit.Options{Key: audittest.InTxKey, DatabaseID: e.dbID, Meta: e.meta, WritesInTx: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr, audit.NewSaver(e.inner, tr, nil)
}

func (e *s29Env) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := e.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func s29Checkpoint(n int) *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n),
		ChannelValues: map[string]any{"a": "v"}, ChannelVersions: map[string]string{"a": "1"}}
}

// s29Head puts a checkpoint through s and chains it: tr knows its head,
// and its next read alone in flight chains its own record.
func s29Head(t *testing.T, tr *audit.Trail, s checkpointer.Saver, thread string) checkpointer.Config {
	t.Helper()
	ctx := context.Background()
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, s29Checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// One read chained by itself: the head is one a read set too.
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestS29WipedTrailNotExtendedByRead: the package doc promises that once
// the chain began, an emptied trail is extended by no writer. A process
// that knows its head (it appended the last record) and reads alone in
// flight after the trail was wiped must not put its record (seq head+1)
// into the empty table, where every later appender would extend it.
func TestS29WipedTrailNotExtendedByRead(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "wipe")
	e.exec(t, `DELETE FROM memvault_audit`)
	_, readErr := s.GetTuple(ctx, cfg)
	var n int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM memvault_audit`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a read after the trail was wiped (read error %v) stored %d chained rows in the empty trail: the wiped trail is extended", readErr, n)
	}
	// And no writer extends it either.
	if _, err := s.Put(ctx, cfg, s29Checkpoint(2), checkpointer.Metadata{}, map[string]string{"a": "2"}); err == nil {
		_ = tr.Flush(ctx)
	}
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM memvault_audit`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("after a wipe, %d rows were chained", n)
	}
}

// TestS29RestoredTrailNoGap: the trail restored from a backup that ends
// before the head this process knows (the last records cut off) — the
// process's next lone read must not chain its record at head+1 after a
// record that is gone: memvault itself would leave a gap no Verify
// forgives. Before chained reads, its pending record was chained after
// the table's last record.
func TestS29RestoredTrailNoGap(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "restore")
	e.exec(t, `DELETE FROM memvault_audit WHERE seq = (SELECT max(seq) FROM memvault_audit)`)
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatalf("after the trail was cut back by one record, a lone read chained its record: Verify = %v", err)
	}
}

// TestS29RestoredTrailNoFork: the trail cut back by one record, and another
// process appending one record in its place: this process's cached head
// names the right sequence number but a link no longer in the trail. Its
// lone read must not chain after it (a fork: the record's link does not
// follow the stored record before it).
func TestS29RestoredTrailNoFork(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "fork")
	e.exec(t, `DELETE FROM memvault_audit WHERE seq = (SELECT max(seq) FROM memvault_audit)`)
	tr2, s2 := e.trail(t)
	if _, err := s2.Put(ctx, checkpointer.Config{ThreadID: "other"}, s29Checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := tr2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatalf("a lone read chained its record after a head another process replaced: Verify = %v", err)
	}
}

// TestS29DeferredRefusalFailsRead: a constraint on the trail checked at
// commit (a deferred constraint trigger) refuses the chained record: the
// read must return no data.
func TestS29DeferredRefusalFailsRead(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "deferred")
	e.exec(t, `CREATE FUNCTION s29_refuse() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN
		IF NEW.target = 'deferred' THEN RAISE EXCEPTION 's29: refused at commit'; END IF; RETURN NEW; END$$`)
	for _, table := range []string{"memvault_audit", "memvault_audit_pending"} {
		e.exec(t, `CREATE CONSTRAINT TRIGGER s29_refuse AFTER INSERT ON `+table+` DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION s29_refuse()`)
	}
	tp, err := s.GetTuple(ctx, cfg)
	if err == nil || tp != nil {
		t.Fatalf("GetTuple whose record is refused at commit = %v, %v; want no tuple and an error", tp, err)
	}
	for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: "deferred"}, checkpointer.ListOptions{Limit: 5}) {
		if err == nil || tp != nil {
			t.Fatalf("List whose record is refused at commit yielded %v, %v", tp, err)
		}
	}
}

// TestS29MalformedBatchRowOpen: a trail row whose more column was edited
// into something that is not a JSON array (tampering) — the upgrade's
// index over json_array_length(more) cannot be built. Open (Setup) then
// fails; the error should at least say that the trail is the reason.
func TestS29MalformedBatchRowOpen(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	s29Head(t, tr, s, "malformed")
	e.exec(t, `DROP INDEX memvault_audit_row_first`)
	e.exec(t, `DELETE FROM memvault_audit_migrations WHERE v = (SELECT max(v) FROM memvault_audit_migrations)`)
	e.exec(t, `UPDATE memvault_audit SET more = '{"not":"an array"}' WHERE seq = (SELECT max(seq) FROM memvault_audit)`)
	tb, err := pgaudit.New(e.pool, pgaudit.Options{Schema: e.schema})
	if err != nil {
		t.Fatal(err)
	}
	err = tb.Setup(ctx)
	t.Logf("Setup over a trail with a malformed batch row: %v", err)
	if err == nil {
		t.Fatal("Setup built the index over a malformed more column")
	}
	if !errors.Is(err, audit.ErrTampered) {
		t.Skipf("finding: Setup over a tampered batch row fails with %q, not ErrTampered naming the row: the operator cannot even run Verify", err)
	}
}

// TestS29ChainedReadCitus: on a Citus coordinator pgsaver commits a read's
// record first, by itself (recordedTuples), then reads: the chained row
// (its After clause: the lock, the record it follows) must work there
// too — each lone read one record, chained by the read itself, and
// the trail verifying. No such test ran the chained row on Citus.
func TestS29ChainedReadCitus(t *testing.T) {
	pool, schema := pgtest.CitusSchema(t)
	e := s29OpenOn(t, pool, schema)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "citus")
	for i := range 3 {
		// Chained first: the head is known, and the put's delayed
		// chaining run has nothing left to do (it is skipped).
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if tp, err := s.GetTuple(ctx, cfg); err != nil || tp == nil {
			t.Fatalf("GetTuple %d = %v, %v", i, tp, err)
		}
	}
	listed := 0
	for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: "citus"}, checkpointer.ListOptions{Limit: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		if tp != nil {
			listed++
		}
	}
	if listed != 1 {
		t.Fatalf("List yielded %d tuples, want 1", listed)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	all, direct := 0, 0
	if err := tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointRead && r.Target == "citus" {
			all++
			if r.PendingID == "" {
				direct++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Nothing else holds the trail's lock (the Flush before each read
	// leaves the put's delayed chaining run nothing to do: it is skipped),
	// so every lone read chains its own record.
	if all != 5 || direct != 5 {
		t.Fatalf("five lone reads on Citus: %d records, %d chained by the read; want 5, all chained so", all, direct)
	}
	t.Logf("five lone reads on Citus: %d chained by the read itself", direct)
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestS29KeyChangeBeforeChainedRead: one process under the old audit key
// knows its head; another, under the new key (the old one configured as
// previous), appends — its first record a key change. The old process's
// next lone read must not chain a record under the old key after the
// key change (the chain would go back to a retired key), and the new
// process's own chained reads stay under the new key: the trail verifies
// under the new key.
func TestS29KeyChangeBeforeChainedRead(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	trOld, sOld := e.trail(t)
	cfg := s29Head(t, trOld, sOld, "rotate")
	newKey := []byte("memvault-s29-review-the-new-audit-key-32+")
	trNew, err := audit.NewTrail(e.tb, audit.Options{Key: newKey, Previous: [][]byte{audittest.InTxKey}, DatabaseID: e.dbID, Meta: e.meta, WritesInTx: true})
	if err != nil {
		t.Fatal(err)
	}
	sNew := audit.NewSaver(e.inner, trNew, nil)
	if _, err := sNew.Put(ctx, checkpointer.Config{ThreadID: "rotated"}, s29Checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := trNew.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The old process reads alone: its cached head is stale.
	_, oldErr := sOld.GetTuple(ctx, cfg)
	t.Logf("the old-key process's read after the key change: %v", oldErr)
	for range 2 {
		if err := trNew.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := sNew.GetTuple(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if err := trNew.Flush(ctx); err != nil {
		t.Logf("Flush by the new-key process: %v", err)
	}
	if _, err := trNew.Verify(ctx); err != nil {
		t.Fatalf("after a key change by another process and chained reads on both sides: Verify = %v", err)
	}
	sawChange := false
	if err := trNew.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpKeyChange {
			sawChange = true
		} else if sawChange && !strings.HasPrefix(r.MAC, trNew.KeyID()+":") {
			t.Errorf("record %d after the key change is under %s", r.Seq, r.MAC[:16])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !sawChange {
		t.Fatal("no key change record")
	}
}
