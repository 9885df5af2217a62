package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/serde"
)

// benchSchema creates a schema of the bench's own and returns a pool whose
// connections use it, and a function that drops it.
func benchSchema(ctx context.Context, dsn string, conc int) (*pgxpool.Pool, string, func(), error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, "", nil, optionf("--dsn: %v", err)
	}
	pc.MaxConns = int32(max(conc*2, 8))
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	schema := "memvault_bench_" + hex.EncodeToString(rnd[:])
	pc.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, "", nil, err
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		pool.Close()
		return nil, "", nil, err
	}
	drop := func() {
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = pool.Exec(c, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		pool.Close()
	}
	return pool, schema, drop, nil
}

// benchSerializers returns the plaintext and encrypted (memvault envelope
// under a fresh key) serializers.
func benchSerializers() (map[string]serde.Serializer, error) {
	key, err := config.GenerateKey()
	if err != nil {
		return nil, err
	}
	c := config.Default()
	c.Keys.Primary = key
	c.Encryption = config.EncryptionEnvelope
	enc, err := c.Serializer()
	if err != nil {
		return nil, err
	}
	return map[string]serde.Serializer{"plaintext": serde.JSONPlus{}, "encrypted": enc, groupedMode: enc}, nil
}

// groupedMode is the bench column of the encrypted saver with group
// commit on (GroupCommit groupCommit): at concurrency 1 it commits every
// write alone, at more it commits concurrent writes together.
const groupedMode = "grouped"

// groupCommit is the GroupCommit option of the grouped column's saver:
// 0, no group commit, for any other mode.
func groupCommit(mode string) int {
	if mode == groupedMode {
		return 64
	}
	return 0
}

// cpFixture is the shape the issue fixes: 5 channels of ~1 KiB in all, 2 of
// them new in each put; writes of 3 values.
type cpFixture struct {
	values map[string]any
}

func newCPFixture() cpFixture {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4) // ~180 B
	return cpFixture{values: map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		"context":  map[string]any{"user_id": "u-123", "plan": "premium", "notes": text},
		"summary":  text,
		"step":     int64(7),
		"scratch":  map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text},
	}}
}

func (f cpFixture) checkpoint(step int, versions map[string]string) *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
		ChannelValues: f.values, ChannelVersions: versions,
		VersionsSeen:    map[string]map[string]string{"agent": versions},
		UpdatedChannels: []string{"messages", "scratch"},
	}
}

func benchCheckpointer(ctx context.Context, out io.Writer, dsn string, asJSON bool, bf params, jsDir string) error {
	pool, schema, drop, err := benchSchema(ctx, dsn, bf.concurrency)
	if err != nil {
		return err
	}
	defer drop()
	sers, err := benchSerializers()
	if err != nil {
		return err
	}
	p := &benchPrinter{out: out, json: asJSON}
	if probe, ok := localPGProbe(ctx, pool); ok {
		// A server on this machine: its CPU per operation too, the
		// figure a loaded machine does not blur.
		p.server, p.noBytesIn = true, true
		ctx = context.WithValue(ctx, serverProbeKey{}, probe)
	}
	if !asJSON {
		fmt.Fprintf(out, "checkpointer bench: schema %s, %s per row, concurrency 1 and %d\n", schema, bf.duration, bf.concurrency)
	}
	settings, err := clusterSettings(ctx, pool)
	if err != nil {
		return err
	}
	if err := p.settings(settings); err != nil {
		return err
	}
	fx := newCPFixture()
	savers := map[string]checkpointer.Saver{}
	for _, mode := range []string{"plaintext", "encrypted", groupedMode} {
		s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema, Serde: sers[mode], GroupCommit: groupCommit(mode)})
		if err != nil {
			return err
		}
		if mode == "plaintext" {
			if err := s.Setup(ctx); err != nil {
				return err
			}
		}
		savers[mode] = s
	}
	// audited: the encrypted saver with every operation recorded in an
	// audit trail table of the same database, first (audit.Saver).
	trail, err := benchTrail(ctx, pool, schema)
	if err != nil {
		return err
	}
	savers[auditedMode] = audit.NewSaver(savers["encrypted"], trail, nil)
	// audited-grouped: the grouped saver audited, its records rows of the
	// groups' statements; a trail of its own on the same table, as a
	// second process would have.
	groupedTrail, err := benchTrail(ctx, pool, schema)
	if err != nil {
		return err
	}
	savers[auditedGroupedMode] = audit.NewSaver(savers[groupedMode], groupedTrail, nil)
	raw := newRawCheckpointer(pool, schema)

	// Read fixtures: one thread per mode with 100 checkpoints of 3 writes.
	readIDs := map[string][]string{}
	for _, mode := range []string{"plaintext", "encrypted", auditedMode, groupedMode, auditedGroupedMode, "raw-pgx"} {
		ids, err := seedReadThread(ctx, mode, "raw-pgx", savers, raw, fx)
		if err != nil {
			return err
		}
		readIDs[mode] = ids
	}
	modes := []string{"raw-pgx", "plaintext", "encrypted", auditedMode, groupedMode, auditedGroupedMode}
	var external map[string]sliceRunner
	if jsDir != "" {
		js, err := startJSBench(ctx, jsDir, pool, schema, bf.concurrency, fx.values)
		if err != nil {
			return err
		}
		defer js.Close()
		modes = append(modes, jsMode)
		external = map[string]sliceRunner{jsMode: js.run}
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}

	putSeq, writesSeq := map[string]*atomic.Int64{}, map[string]*atomic.Int64{}
	for _, m := range modes {
		putSeq[m], writesSeq[m] = &atomic.Int64{}, &atomic.Int64{}
	}
	ops := []namedOp{
		{"put", func(mode string) benchOp {
			seq := putSeq[mode] // fn runs once per slice
			return func(ctx context.Context, _ int64) error {
				// Numbered across the row's slices (measure numbers each
				// slice from 1): a thread's versions keep growing, as a
				// graph's do, instead of repeating blobs stored already
				// (which every saver, raw too, skips).
				i := seq.Add(1)
				thread := fmt.Sprintf("put-%s-%d", mode, i%64)
				vers := benchVersions(i)
				cp := fx.checkpoint(int(i), vers)
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				md := checkpointer.Metadata{"source": "loop", "step": i, "run_id": "bench"}
				if mode == "raw-pgx" {
					return raw.put(ctx, thread, cp, md, nv)
				}
				_, err := savers[mode].Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, nv)
				return err
			}
		}},
		{"put_writes", func(mode string) benchOp {
			seq := writesSeq[mode]
			return func(ctx context.Context, _ int64) error {
				// Tasks numbered across the row's slices, as put's steps:
				// numbered by slice (measure numbers each from 1), the
				// second slice's writes were all stored already, each
				// INSERT ... ON CONFLICT DO NOTHING wrote nothing and
				// committed without a WAL flush (0.92 rows a call instead
				// of 3), while the audited column's pending record always
				// committed one: its 0.31× measured an fsync against none.
				i := seq.Add(1)
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("w-%s-%d", mode, i%64), CheckpointID: "1f0c0000-0000-6000-8000-000000000000"}
				ws := []checkpointer.Write{{Channel: "messages", Value: fx.values["messages"]}, {Channel: "scratch", Value: fx.values["scratch"]}, {Channel: "summary", Value: fx.values["summary"]}}
				task := fmt.Sprintf("task-%d", i)
				if mode == "raw-pgx" {
					return raw.putWrites(ctx, cfg, ws, task)
				}
				return savers[mode].PutWrites(ctx, cfg, ws, task, "")
			}
		}},
		{"get_tuple", func(mode string) benchOp {
			return func(ctx context.Context, i int64) error {
				if mode == "raw-pgx" {
					return raw.getTuple(ctx, "read-"+mode, "")
				}
				t, err := savers[mode].GetTuple(ctx, checkpointer.Config{ThreadID: "read-" + mode})
				if err == nil && t == nil {
					err = fmt.Errorf("no tuple")
				}
				return err
			}
		}},
		{"get_tuple_by_id", func(mode string) benchOp {
			return func(ctx context.Context, i int64) error {
				ids := readIDs[mode]
				id := ids[int(i)%len(ids)]
				if mode == "raw-pgx" {
					return raw.getTuple(ctx, "read-"+mode, id)
				}
				t, err := savers[mode].GetTuple(ctx, checkpointer.Config{ThreadID: "read-" + mode, CheckpointID: id})
				if err == nil && t == nil {
					err = fmt.Errorf("no tuple %s", id)
				}
				return err
			}
		}},
		{"list10", func(mode string) benchOp {
			return func(ctx context.Context, i int64) error {
				if mode == "raw-pgx" {
					return raw.list(ctx, "read-"+mode, 10)
				}
				n := 0
				for _, err := range savers[mode].List(ctx, &checkpointer.Config{ThreadID: "read-" + mode}, checkpointer.ListOptions{Limit: 10}) {
					if err != nil {
						return err
					}
					n++
				}
				if n != 10 {
					return fmt.Errorf("list returned %d tuples, want 10", n)
				}
				return nil
			}
		}},
	}
	if err := p.compareOps(ctx, "checkpointer", ops, modes, bf, external); err != nil {
		return err
	}
	p.summary("raw-pgx")
	return nil
}

// auditedMode is the bench column of the audited encrypted saver.
const auditedMode = "audited"

// auditedGroupedMode is the bench column of the grouped saver audited
// (PostgreSQL): beside audited and grouped, what auditing costs writers
// whose commits are shared.
const auditedGroupedMode = "audited-grouped"

// benchTrail is an audit trail in the bench schema, chained under a key
// derived from the bench key.
func benchTrail(ctx context.Context, pool *pgxpool.Pool, schema string) (*audit.Trail, error) {
	tb, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
	if err != nil {
		return nil, err
	}
	if err := tb.Setup(ctx); err != nil {
		return nil, err
	}
	return auditTrail(tb, true)
}

// benchVersions are the channel versions of checkpoint i: "messages" and
// "scratch" change at every step, the other three keep the version (and so
// the blob row) the first checkpoint wrote.
func benchVersions(i int64) map[string]string {
	next := fmt.Sprintf("%032d.%016d", i+1, i)
	first := fmt.Sprintf("%032d.%016d", 1, 0)
	return map[string]string{"messages": next, "scratch": next, "context": first, "summary": first, "step": first}
}

// seedReadThread writes 100 checkpoints with 3 writes each to thread
// "read-<mode>" and returns their ids.
func seedReadThread(ctx context.Context, mode, rawMode string, savers map[string]checkpointer.Saver, raw rawWriter, fx cpFixture) ([]string, error) {
	thread := "read-" + mode
	var ids []string
	parent := ""
	for i := int64(0); i < 100; i++ {
		vers := benchVersions(i)
		cp := fx.checkpoint(int(i), vers)
		nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
		if i == 0 {
			nv = vers
		}
		md := checkpointer.Metadata{"source": "loop", "step": i}
		ws := []checkpointer.Write{{Channel: "messages", Value: "w1"}, {Channel: "scratch", Value: "w2"}, {Channel: "summary", Value: "w3"}}
		cfg := checkpointer.Config{ThreadID: thread, CheckpointID: cp.ID}
		if mode == rawMode {
			if err := raw.putWithParent(ctx, thread, parent, cp, md, nv); err != nil {
				return nil, err
			}
			if err := raw.putWrites(ctx, cfg, ws, "task"); err != nil {
				return nil, err
			}
		} else {
			if _, err := savers[mode].Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, nv); err != nil {
				return nil, err
			}
			if err := savers[mode].PutWrites(ctx, cfg, ws, "task", ""); err != nil {
				return nil, err
			}
		}
		parent = cp.ID
		ids = append(ids, cp.ID)
	}
	return ids, nil
}

// rawCheckpointer is the baseline: the same tables and equivalent SQL, sent
// with pgx directly, values encoded and decoded with encoding/json.
type rawCheckpointer struct {
	pool                                 *pgxpool.Pool
	putBlobs, putCkpt, putWritesQ, getQ  string
	getByIDQ, listQ                      string
	checkpoints, blobsTable, writesTable string
}

func newRawCheckpointer(pool *pgxpool.Pool, schema string) *rawCheckpointer {
	id := func(t string) string { return pgx.Identifier{schema, t}.Sanitize() }
	r := &rawCheckpointer{pool: pool, checkpoints: id("checkpoints"), blobsTable: id("checkpoint_blobs"), writesTable: id("checkpoint_writes")}
	r.putBlobs = `INSERT INTO ` + r.blobsTable + ` (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, '', ch, ver, 'json', bl FROM unnest($2::text[], $3::text[], $4::bytea[]) AS t(ch, ver, bl)
ON CONFLICT DO NOTHING`
	r.putCkpt = `INSERT INTO ` + r.checkpoints + ` (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, '', $2, $3, $4, $5) ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`
	r.putWritesQ = `INSERT INTO ` + r.writesTable + ` (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, '', $2, $3, '', idx, ch, 'json', bl FROM unnest($4::int[], $5::text[], $6::bytea[]) AS t(idx, ch, bl)
ON CONFLICT DO NOTHING`
	// Every subquery names the thread ($1), as pgsaver's tuple query
	// does: on Citus that routes the whole statement to the thread's
	// shard (with c.thread_id alone, the lateral value lookup fails:
	// "XX000 invalid attnum"); on plain PostgreSQL it is the same plan.
	sel := `SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
 (SELECT array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob]) FROM jsonb_each_text(c.checkpoint -> 'channel_versions') cv
   JOIN ` + r.blobsTable + ` bl ON bl.thread_id = $1 AND bl.checkpoint_ns = c.checkpoint_ns AND bl.channel = cv.key AND bl.version = cv.value),
 (SELECT array_agg(array[cw.task_id::bytea, cw.channel::bytea, cw.type::bytea, cw.blob] ORDER BY cw.task_id, cw.idx) FROM ` + r.writesTable + ` cw
   WHERE cw.thread_id = $1 AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id)
FROM ` + r.checkpoints + ` c WHERE c.thread_id = $1 AND c.checkpoint_ns = ''`
	r.getQ = sel + ` ORDER BY c.checkpoint_id DESC LIMIT 1`
	r.getByIDQ = sel + ` AND c.checkpoint_id = $2`
	r.listQ = sel + ` ORDER BY c.checkpoint_id DESC LIMIT $2`
	return r
}

func (r *rawCheckpointer) put(ctx context.Context, thread string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) error {
	return r.putWithParent(ctx, thread, "", cp, md, nv)
}

func (r *rawCheckpointer) putWithParent(ctx context.Context, thread, parent string, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) error {
	chans := make([]string, 0, len(nv))
	vers := make([]string, 0, len(nv))
	blobs := make([][]byte, 0, len(nv))
	for ch, v := range nv {
		b, err := json.Marshal(cp.ChannelValues[ch])
		if err != nil {
			return err
		}
		chans, vers, blobs = append(chans, ch), append(vers, v), append(blobs, b)
	}
	doc, err := json.Marshal(map[string]any{"v": cp.V, "id": cp.ID, "ts": cp.TS, "channel_values": map[string]any{}, "channel_versions": cp.ChannelVersions, "versions_seen": cp.VersionsSeen, "updated_channels": cp.UpdatedChannels})
	if err != nil {
		return err
	}
	meta, err := json.Marshal(md)
	if err != nil {
		return err
	}
	var par *string
	if parent != "" {
		par = &parent
	}
	b := &pgx.Batch{}
	b.Queue(r.putBlobs, thread, chans, vers, blobs)
	b.Queue(r.putCkpt, thread, cp.ID, par, doc, meta)
	return r.pool.SendBatch(ctx, b).Close()
}

func (r *rawCheckpointer) putWrites(ctx context.Context, cfg checkpointer.Config, ws []checkpointer.Write, task string) error {
	idx := make([]int32, len(ws))
	chans := make([]string, len(ws))
	blobs := make([][]byte, len(ws))
	for i, w := range ws {
		b, err := json.Marshal(w.Value)
		if err != nil {
			return err
		}
		idx[i], chans[i], blobs[i] = int32(i), w.Channel, b
	}
	_, err := r.pool.Exec(ctx, r.putWritesQ, cfg.ThreadID, cfg.CheckpointID, task, idx, chans, blobs)
	return err
}

func (r *rawCheckpointer) scanAll(rows pgx.Rows) (int, error) {
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var parent *string
		var doc, meta []byte
		var vals, writes pgtype.FlatArray[[]byte]
		if err := rows.Scan(&id, &parent, &doc, &meta, &vals, &writes); err != nil {
			return n, err
		}
		// An application needs the values, not the bytes: decode them the
		// plain way (encoding/json), as the library must.
		var d, m map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			return n, err
		}
		if err := json.Unmarshal(meta, &m); err != nil {
			return n, err
		}
		for i := 2; i < len(vals); i += 3 { // [channel, type, blob] rows
			var v any
			if err := json.Unmarshal(vals[i], &v); err != nil {
				return n, err
			}
		}
		for i := 3; i < len(writes); i += 4 { // [task, channel, type, blob] rows
			var v any
			if err := json.Unmarshal(writes[i], &v); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, rows.Err()
}

func (r *rawCheckpointer) getTuple(ctx context.Context, thread, id string) error {
	var rows pgx.Rows
	var err error
	if id == "" {
		rows, err = r.pool.Query(ctx, r.getQ, thread)
	} else {
		rows, err = r.pool.Query(ctx, r.getByIDQ, thread, id)
	}
	if err != nil {
		return err
	}
	n, err := r.scanAll(rows)
	if err == nil && n != 1 {
		err = fmt.Errorf("raw get: %d rows", n)
	}
	return err
}

func (r *rawCheckpointer) list(ctx context.Context, thread string, limit int) error {
	rows, err := r.pool.Query(ctx, r.listQ, thread, limit)
	if err != nil {
		return err
	}
	n, err := r.scanAll(rows)
	if err == nil && n != limit {
		err = fmt.Errorf("raw list: %d rows", n)
	}
	return err
}
