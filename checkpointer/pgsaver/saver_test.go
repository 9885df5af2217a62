package pgsaver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// encrypted returns memvault's default encrypting serializer under a fixed
// test key.
func encrypted(t testing.TB, opts ...serde.EncryptedOption) *serde.Encrypted {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// step builds checkpoint n of a thread whose channels hold the given values;
// every channel in vals gets version n.
func step(n int, prev *checkpointer.Checkpoint, vals map[string]any) (*checkpointer.Checkpoint, map[string]string) {
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now().UTC().Truncate(time.Microsecond),
		ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	if prev != nil {
		for k, v := range prev.ChannelValues {
			cp.ChannelValues[k] = v
		}
		for k, v := range prev.ChannelVersions {
			cp.ChannelVersions[k] = v
		}
	}
	nv := map[string]string{}
	for k, v := range vals {
		cp.ChannelValues[k] = v
		cp.ChannelVersions[k] = fmt.Sprint(n)
		nv[k] = fmt.Sprint(n)
	}
	return cp, nv
}

func count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestTxTwins: PutTx, PutWritesTx and DeleteThreadTx commit or roll back
// with the caller's own rows.
func TestTxTwins(t *testing.T) {
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{})
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	run := func(commit bool) checkpointer.Config {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, `INSERT INTO orders VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		cp, nv := step(1, nil, map[string]any{"a": "x"})
		cfg, err := s.PutTx(ctx, tx, checkpointer.Config{ThreadID: "tx"}, cp, checkpointer.Metadata{"step": 1}, nv)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWritesTx(ctx, tx, cfg, []checkpointer.Write{{Channel: "a", Value: "y"}}, "task", "p"); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return cfg
	}

	run(false)
	if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "tx"}); err != nil || tu != nil {
		t.Fatalf("after rollback: %v, %v", tu, err)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoint_blobs`) + count(t, pool, `SELECT count(*) FROM checkpoint_writes`) + count(t, pool, `SELECT count(*) FROM orders`); n != 0 {
		t.Fatalf("after rollback: %d rows left", n)
	}

	cfg := run(true)
	tu, err := s.GetTuple(ctx, cfg)
	if err != nil || tu == nil || tu.Checkpoint.ChannelValues["a"] != "x" || len(tu.PendingWrites) != 1 {
		t.Fatalf("after commit: %+v, %v", tu, err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThreadTx(ctx, tx, "tx"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if tu, err := s.GetTuple(ctx, cfg); err != nil || tu == nil {
		t.Fatalf("DeleteThreadTx rolled back but thread gone: %v", err)
	}
}

// TestKilledMidPut terminates the backend running a Put after the blob rows
// are written and while the checkpoint row waits for a lock: nothing of the
// Put remains, so no checkpoint can exist without its values.
func TestKilledMidPut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, pool := newSaver(t, pgsaver.Options{})
	cfg := pool.Config()
	cfg.ConnConfig.RuntimeParams["application_name"] = "memvault-killed-put"
	victimPool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer victimPool.Close()
	victim, err := pgsaver.New(victimPool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}

	cp, nv := step(1, nil, map[string]any{"a": "x", "b": []any{1, 2}, "c": map[string]any{"k": "v"}})
	// Another transaction holds the key of the Put's second value, so
	// the Put's statement waits after inserting its first (values are
	// inserted in channel order), before its checkpoint row.
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ('k', '', 'b', $1, 'json', '\x00')`, nv["b"]); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := victim.Put(ctx, checkpointer.Config{ThreadID: "k"}, cp, nil, nv)
		done <- err
	}()
	var pid int32
	for {
		err := pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = 'memvault-killed-put' AND wait_event_type = 'Lock'`).Scan(&pid)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the Put never waited on the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var blobsInFlight int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks l WHERE l.pid = $1 AND l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock'`, pid).Scan(&blobsInFlight); err != nil {
		t.Fatal(err)
	}
	if blobsInFlight != 1 {
		t.Fatalf("the Put's transaction has not written yet (%d xid locks)", blobsInFlight)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("Put succeeded on a killed connection")
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'k'`); n != 0 {
		t.Errorf("%d blob rows of the killed Put committed", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoints WHERE thread_id = 'k'`); n != 0 {
		t.Errorf("%d checkpoint rows of the killed Put committed", n)
	}
	// The saver still works on the same pool afterwards.
	if _, err := victim.Put(ctx, checkpointer.Config{ThreadID: "k"}, cp, nil, nv); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'k'`); n != 3 {
		t.Errorf("retry wrote %d blob rows, want 3", n)
	}
}

// TestNULAndMetacharacters: SQL metacharacters round-trip in every text
// field; NUL is stripped from metadata and refused, with checkpointer.ErrInvalidID, in ids.
func TestNULAndMetacharacters(t *testing.T) {
	ctx := context.Background()
	s, _ := newSaver(t, pgsaver.Options{})
	odd := []string{`'; DROP TABLE checkpoints; --`, `%_\`, `\x41\\`, `"q"`, `$1 ?`, "ünï ✓\n\t", `{a,b}`}
	for i, text := range odd {
		cfg := checkpointer.Config{ThreadID: text, CheckpointNS: text}
		cp, nv := step(1, nil, map[string]any{text: text, "plain": i})
		out, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"k": text, text: "v", "nul": "a\x00b", "x\x00y": []any{"p\x00"}}, nv)
		if err != nil {
			t.Fatalf("%q: put: %v", text, err)
		}
		if err := s.PutWrites(ctx, out, []checkpointer.Write{{Channel: text, Value: text}}, text, text); err != nil {
			t.Fatalf("%q: put writes: %v", text, err)
		}
		tu, err := s.GetTuple(ctx, cfg)
		if err != nil || tu == nil {
			t.Fatalf("%q: get: %v %v", text, tu, err)
		}
		if tu.Config.ThreadID != text || tu.Config.CheckpointNS != text || tu.Checkpoint.ChannelValues[text] != text {
			t.Errorf("%q: tuple %+v values %v", text, tu.Config, tu.Checkpoint.ChannelValues)
		}
		wantJSON(t, "metadata", tu.Metadata, fmt.Sprintf(`{"k":%q,%q:"v","nul":"ab","xy":["p"]}`, text, text))
		if len(tu.PendingWrites) != 1 || tu.PendingWrites[0].TaskID != text || tu.PendingWrites[0].Channel != text || tu.PendingWrites[0].Value != text {
			t.Errorf("%q: writes %+v", text, tu.PendingWrites)
		}
		n := 0
		for tu, err := range s.List(ctx, &cfg, checkpointer.ListOptions{Filter: map[string]any{"k": text}}) {
			if err != nil {
				t.Fatal(err)
			}
			if tu.Config.ThreadID != text {
				t.Errorf("%q: listed %q", text, tu.Config.ThreadID)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%q: list by metadata found %d", text, n)
		}
		for range s.List(ctx, &cfg, checkpointer.ListOptions{Filter: map[string]any{"nul": "a\x00b"}}) {
			t.Errorf("%q: a filter holding NUL matched stripped metadata", text)
		}
	}
	if n := 0; true {
		for _, err := range s.List(ctx, nil, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(odd) {
			t.Errorf("listed %d threads, want %d (a metacharacter escaped its quoting?)", n, len(odd))
		}
	}

	bad := "t\x00"
	cp, nv := step(1, nil, map[string]any{"a": 1})
	checks := map[string]error{}
	_, checks["put thread"] = s.Put(ctx, checkpointer.Config{ThreadID: bad}, cp, nil, nv)
	_, checks["put ns"] = s.Put(ctx, checkpointer.Config{ThreadID: "t", CheckpointNS: bad}, cp, nil, nv)
	_, checks["put channel"] = s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, map[string]string{bad: "1"})
	_, checks["get"] = s.GetTuple(ctx, checkpointer.Config{ThreadID: bad})
	checks["writes task"] = s.PutWrites(ctx, checkpointer.Config{ThreadID: "t", CheckpointID: cp.ID}, []checkpointer.Write{{Channel: "a"}}, bad, "")
	checks["writes channel"] = s.PutWrites(ctx, checkpointer.Config{ThreadID: "t", CheckpointID: cp.ID}, []checkpointer.Write{{Channel: bad}}, "task", "")
	checks["delete"] = s.DeleteThread(ctx, bad)
	checks["copy"] = s.CopyThread(ctx, "t", bad)
	for _, err := range s.List(ctx, &checkpointer.Config{ThreadID: bad}, checkpointer.ListOptions{}) {
		checks["list"] = err
	}
	for what, err := range checks {
		if !errors.Is(err, checkpointer.ErrInvalidID) {
			t.Errorf("%s with NUL: %v, want checkpointer.ErrInvalidID", what, err)
		}
	}
}

// TestList10000 pages through a thread of 10 000 checkpoints with Before and
// Limit, and shows that List streams: with a result far larger than socket
// buffers, the server is still writing rows when the first one arrives.
func TestList10000(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, pool := newSaver(t, pgsaver.Options{})
	const n = 10000
	if _, err := pool.Exec(ctx, `
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT 'big', '', id, NULL,
	jsonb_build_object('v', 4, 'id', id, 'ts', '2024-05-04T06:32:42.235444+00:00', 'channel_values', '{}'::jsonb,
		'channel_versions', jsonb_build_object('a', '1'), 'versions_seen', '{}'::jsonb),
	jsonb_build_object('step', i, 'pad', repeat(md5(i::text), 64))
FROM (SELECT i, lpad(i::text, 8, '0') AS id FROM generate_series(1, $1::int) i) g`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO checkpoint_blobs VALUES ('big', '', 'a', '1', 'json', '"v"'); ANALYZE`); err != nil {
		t.Fatal(err)
	}

	cfg := &checkpointer.Config{ThreadID: "big"}
	next, seen := n, 0
	var before *checkpointer.Config
	for {
		page := 0
		for tu, err := range s.List(ctx, cfg, checkpointer.ListOptions{Before: before, Limit: 250}) {
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%08d", next); tu.Config.CheckpointID != want || tu.Checkpoint.ChannelValues["a"] != "v" {
				t.Fatalf("got %s (a=%v), want %s", tu.Config.CheckpointID, tu.Checkpoint.ChannelValues["a"], want)
			}
			before = &tu.Config
			next--
			page++
		}
		if page == 0 {
			break
		}
		seen += page
	}
	if seen != n {
		t.Fatalf("paged through %d checkpoints, want %d", seen, n)
	}

	pc := pool.Config()
	pc.ConnConfig.RuntimeParams["application_name"] = "memvault-stream"
	streamPool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	defer streamPool.Close()
	ss, err := pgsaver.New(streamPool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, err := range ss.List(ctx, cfg, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got++
		if got == 1 {
			// ~20 MB of rows: the server blocks writing them until the
			// client reads, which it only does as the loop advances.
			for {
				var waiting bool
				err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = 'memvault-stream' AND state = 'active' AND wait_event = 'ClientWrite')`).Scan(&waiting)
				if err != nil {
					t.Fatal(err)
				}
				if waiting {
					break
				}
				if ctx.Err() != nil {
					t.Fatal("the server finished sending: List buffered the result")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if got == 3 {
			break
		}
	}
	if st := streamPool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("breaking out of List left %d connections acquired", st.AcquiredConns())
	}
}

// TestPruneCollectsBlobs: keep_latest keeps each namespace's newest
// checkpoint, its writes and every value it references, including values
// written by the checkpoints it removes; other blob rows go.
func TestPruneCollectsBlobs(t *testing.T) {
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{})
	put := func(thread, ns string, n int, prev *checkpointer.Checkpoint, vals map[string]any) *checkpointer.Checkpoint {
		cp, nv := step(n, prev, vals)
		var parent string
		if prev != nil {
			parent = prev.ID
		}
		cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: parent}, cp, checkpointer.Metadata{"run_id": fmt.Sprintf("run-%d", n)}, nv)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "a", Value: n}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		return cp
	}
	for _, thread := range []string{"p", "other"} {
		c1 := put(thread, "", 1, nil, map[string]any{"a": 1, "b": "kept"})
		c2 := put(thread, "", 2, c1, map[string]any{"a": 2})
		put(thread, "", 3, c2, map[string]any{"a": 3})
		s1 := put(thread, "sub:1", 1, nil, map[string]any{"x": 1})
		put(thread, "sub:1", 2, s1, map[string]any{"x": 2})
	}
	if err := s.Prune(ctx, []string{"p"}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	blobs := func(thread string) []string {
		rows, err := pool.Query(ctx, `SELECT checkpoint_ns || '/' || channel || '@' || version FROM checkpoint_blobs WHERE thread_id = $1 ORDER BY 1`, thread)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}
	if got, want := blobs("p"), []string{"/a@3", "/b@1", "sub:1/x@2"}; !slices.Equal(got, want) {
		t.Errorf("blobs after prune = %v, want %v", got, want)
	}
	if got := count(t, pool, `SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'p'`); got != 2 {
		t.Errorf("writes after prune = %d, want 2 (the kept checkpoints')", got)
	}
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "kept values", tu.Checkpoint.ChannelValues, `{"a":3,"b":"kept"}`)
	if got := len(blobs("other")); got != 6 {
		t.Errorf("other thread has %d blobs, want 6 (untouched)", got)
	}

	// DeleteForRuns: run-3 made other's latest root checkpoint; its own a@3
	// goes, a@2 and b@1 (still referenced by run-2's checkpoint) stay.
	if err := s.DeleteForRuns(ctx, []string{"run-3"}); err != nil {
		t.Fatal(err)
	}
	if got, want := blobs("other"), []string{"/a@1", "/a@2", "/b@1", "sub:1/x@1", "sub:1/x@2"}; !slices.Equal(got, want) {
		t.Errorf("blobs after DeleteForRuns = %v, want %v", got, want)
	}
	if got := count(t, pool, `SELECT count(*) FROM checkpoints WHERE metadata->>'run_id' = 'run-3'`); got != 0 {
		t.Errorf("%d run-3 checkpoints left", got)
	}
}

// TestCopyThreadEncrypted: encrypted values are bound to their thread, so a
// row copied by hand to another thread fails to decrypt, while CopyThread
// re-encrypts for the destination.
func TestCopyThreadEncrypted(t *testing.T) {
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{Serde: encrypted(t)})
	cp, nv := step(1, nil, map[string]any{"secret": "attack at dawn", "n": 7})
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "src"}, cp, checkpointer.Metadata{"step": 1}, nv)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "secret", Value: "retreat"}, {Channel: checkpointer.ChannelInterrupt, Value: "why"}}, "task", "path"); err != nil {
		t.Fatal(err)
	}
	var typ string
	var raw []byte
	if err := pool.QueryRow(ctx, `SELECT type, blob FROM checkpoint_blobs WHERE channel = 'secret'`).Scan(&typ, &raw); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains([]string{"json+mvgcm", "msgpack+mvgcm"}, typ) || bytes.Contains(raw, []byte("attack at dawn")) {
		t.Fatalf("stored value: %s %q", typ, raw)
	}

	// A replayed row: same bytes under another thread.
	if _, err := pool.Exec(ctx, `INSERT INTO checkpoints SELECT 'replay', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = 'src';
INSERT INTO checkpoint_blobs SELECT 'replay', checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = 'src'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "replay"}); !errors.Is(err, serde.ErrDecrypt) {
		t.Errorf("replayed row: %v, want ErrDecrypt", err)
	}

	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"src", "dst"} {
		tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil || tu == nil {
			t.Fatalf("%s: %v", thread, err)
		}
		wantJSON(t, thread+" values", tu.Checkpoint.ChannelValues, `{"secret":"attack at dawn","n":7}`)
		wantJSON(t, thread+" writes", tu.PendingWrites, `[{"TaskID":"task","Channel":"__interrupt__","Value":"why"},{"TaskID":"task","Channel":"secret","Value":"retreat"}]`)
	}
	if got := count(t, pool, `SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'dst' AND task_path = 'path'`); got != 2 {
		t.Errorf("copied writes with task_path: %d", got)
	}
	// Unknown source: nothing copied, no error.
	if err := s.CopyThread(ctx, "nobody", "dst2"); err != nil {
		t.Fatal(err)
	}
	if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "dst2"}); err != nil || tu != nil {
		t.Errorf("copy of unknown thread: %v %v", tu, err)
	}
}

// TestPythonAESRows: rows Python LangGraph encrypted with
// EncryptedSerializer.from_pycryptodome_aes (the reference known-answer
// vector, AES-EAX, no associated data) are read by the encrypting saver, and
// what the saver writes itself reaches no blob column in clear.
func TestPythonAESRows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	execFile(t, pool, "python_schema.sql")
	execFile(t, pool, "python_aes_rows.sql")
	// Python's rows are in the unbound "aes" format: an envelope-mode
	// serializer refuses them (serde.ErrUnboundRefused); reading Python's
	// database is LangGraph mode.
	envelope, err := pgsaver.New(pool, pgsaver.Options{Serde: encrypted(t, serde.WithDangerousPlaintextReads())})
	if err != nil {
		t.Fatal(err)
	}
	if err := envelope.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := envelope.GetTuple(ctx, checkpointer.Config{ThreadID: "py-aes"}); !errors.Is(err, serde.ErrUnboundRefused) {
		t.Fatalf("envelope-mode read of Python's aes rows: %v, want ErrUnboundRefused", err)
	}
	strict, err := pgsaver.New(pool, pgsaver.Options{Serde: encrypted(t, serde.WithDangerousLangGraphAES(crypto.ModeGCM))})
	if err != nil {
		t.Fatal(err)
	}
	// Python keeps primitive channel values inline, in plaintext: a strict
	// saver refuses the checkpoint; reading Python's database takes
	// plaintext reads.
	if _, err := strict.GetTuple(ctx, checkpointer.Config{ThreadID: "py-aes"}); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Fatalf("strict read of Python's inline plaintext: %v, want ErrPlaintextRefused", err)
	}
	s, err := pgsaver.New(pool, pgsaver.Options{Serde: encrypted(t, serde.WithDangerousPlaintextReads(), serde.WithDangerousLangGraphAES(crypto.ModeGCM))})
	if err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "py-aes"})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "python aes values", tu.Checkpoint.ChannelValues, `{"plain":"inline text","secret":{"a":1}}`)

	const secret = "top-secret-value"
	cp, nv := step(2, tu.Checkpoint, map[string]any{"secret": secret, "list": []any{secret}})
	cfg, err := s.Put(ctx, tu.Config, cp, nil, nv)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "secret", Value: secret}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoint_blobs WHERE position(convert_to($1, 'UTF8') in blob) > 0`, secret) +
		count(t, pool, `SELECT count(*) FROM checkpoint_writes WHERE position(convert_to($1, 'UTF8') in blob) > 0`, secret); n != 0 {
		t.Errorf("%d rows hold the value in clear", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'py-aes' AND type NOT LIKE '%+%'`); n != 0 {
		t.Errorf("%d blob rows without a cipher suffix", n)
	}
	got, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// "plain" was inline in Python's row: continuing the thread keeps it.
	wantJSON(t, "values after put", got.Checkpoint.ChannelValues, `{"plain":"inline text","secret":"top-secret-value","list":["top-secret-value"]}`)
}
