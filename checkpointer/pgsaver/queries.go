package pgsaver

import (
	"strings"

	"github.com/memvault/memvault/checkpointer/internal/sqlrows"
	"github.com/memvault/memvault/internal/pgcitus"
	"github.com/memvault/memvault/internal/pgdb"
)

// queries holds every statement with the table names filled in, built once
// per Saver so hot paths do no string work and pgx's statement cache sees the
// same text each time.
type queries struct {
	schema                     string
	checkpoints, blobs, writes string // table names, qualified and quoted when a schema is set

	// selectTuple is SELECT ... FROM checkpoints c, ready for a WHERE, in
	// the forms of plain PostgreSQL and Citus (which runs the statement
	// across shards in another form); selectTupleThread is its form for
	// one thread, $1, which both run.
	selectTuple       pgcitus.Forms
	selectTupleThread string
	getByID           string
	getLatest         string
	putCkpt           string
	insertWrites      string
	upsertWrites      string
	// putCkptRows, insertWritesRows and upsertWritesRows are putCkpt,
	// insertWrites and upsertWrites for the rows of many writes in one
	// statement (group commit: see WriteGroup).
	putCkptRows      string
	insertWritesRows string
	upsertWritesRows string
	// records are the statements of audit records as rows, by shape,
	// built when a group first has them (group_records.go).
	records      *recordStatements
	threads      string
	rowThreads   string
	threadInfos  string
	headsThreads map[bool]string // by whether with the orphan write sets
	headsRuns    map[bool]string
	// lock and lockThreads run once per thread on Citus, which runs FOR
	// UPDATE only in a statement routed to one shard.
	lock          string
	remove        string
	gcBlobs       string
	gcThreads     string
	lockThreads   string
	deleteThreads string
	// keepLatest runs once per thread on Citus, as lock does; orphanWrites
	// (a prune's writes and values) once.
	keepLatest, orphanWrites string
	thread                   [3]string // every row of a thread (sqlrows.Thread)
	putCkptsCopy             string
	putBlobsCopy             string
	putWritesCopy            string
}

func buildQueries(schema string) queries {
	q := queries{
		schema:      schema,
		checkpoints: pgdb.Ident(schema, "checkpoints"),
		blobs:       pgdb.Ident(schema, "checkpoint_blobs"),
		writes:      pgdb.Ident(schema, "checkpoint_writes"),
		records:     &recordStatements{},
	}
	r := strings.NewReplacer("{checkpoints}", q.checkpoints, "{blobs}", q.blobs, "{writes}", q.writes)
	f := r.Replace

	// One statement returns a checkpoint with everything needed to rebuild
	// it, as LangGraph's PostgresSaver does: channel values are the blob rows
	// at each channel's *current* version (whichever checkpoint wrote them),
	// pending writes are ordered by (task_id, idx), and v<4 checkpoints also
	// get their parent's __pregel_tasks writes (pending sends). Text is
	// turned into bytea with convert_to, not a ::bytea cast, so backslashes
	// in channel names survive. The blob lookup is a LATERAL subquery kept
	// apart by OFFSET 0 so that each channel is one primary-key probe: joined
	// plainly, the planner (which guesses 100 rows for jsonb_each_text) hashes
	// every blob row of the thread instead, a cost that grows with the
	// thread's history.
	//
	// Each subquery names the thread itself ({thread}): the parameter $1
	// when the statement reads one thread, which lets Citus route the whole
	// statement to that thread's shard (it cannot push the LATERAL lookup
	// down otherwise: "cannot push down this subquery"), and costs plain
	// PostgreSQL nothing (the outer WHERE pins c.thread_id to the same
	// value). Across threads it is the outer row's column.
	lateralValues := `(SELECT array_agg(array[convert_to(cv.key, 'UTF8'), convert_to(cv.value, 'UTF8'), convert_to(bl.type, 'UTF8'), bl.blob])
		FROM jsonb_each_text(c.checkpoint -> 'channel_versions') cv
		CROSS JOIN LATERAL (SELECT b.type, b.blob FROM {blobs} b WHERE b.thread_id = {thread} AND b.checkpoint_ns = c.checkpoint_ns
			AND b.channel = cv.key AND b.version = cv.value OFFSET 0) bl)`
	// Across threads on Citus, whose planner refuses the LATERAL lookup
	// over jsonb_each_text when the statement spans shards: the values are
	// the value rows of the checkpoint's namespace at the channel's current
	// version, a correlated subquery Citus pushes down to every shard. It
	// reads every value row of the namespace for each checkpoint, so plain
	// PostgreSQL keeps the LATERAL form.
	spreadValues := `(SELECT array_agg(array[convert_to(b.channel, 'UTF8'), convert_to(b.version, 'UTF8'), convert_to(b.type, 'UTF8'), b.blob])
		FROM {blobs} b WHERE b.thread_id = {thread} AND b.checkpoint_ns = c.checkpoint_ns
			AND b.version = c.checkpoint -> 'channel_versions' ->> b.channel)`
	tuple := func(values, thread string) string {
		return strings.ReplaceAll(f(`SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
	`+values+` AS channel_values,
	(SELECT array_agg(array[convert_to(cw.task_id, 'UTF8'), convert_to(cw.idx::text, 'UTF8'), convert_to(cw.channel, 'UTF8'), convert_to(coalesce(cw.type, ''), 'UTF8'), cw.blob] ORDER BY cw.task_id, cw.idx)
		FROM {writes} cw
		WHERE cw.thread_id = {thread} AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id) AS pending_writes,
	CASE WHEN c.parent_checkpoint_id IS NOT NULL AND jsonb_typeof(c.checkpoint -> 'v') = 'number' AND (c.checkpoint -> 'v') < '4'::jsonb THEN
	(SELECT array_agg(array[convert_to(ps.task_id, 'UTF8'), convert_to(ps.idx::text, 'UTF8'), convert_to(ps.channel, 'UTF8'), convert_to(coalesce(ps.type, ''), 'UTF8'), ps.blob] ORDER BY ps.task_path, ps.task_id, ps.idx)
		FROM {writes} ps
		WHERE ps.thread_id = {thread} AND ps.checkpoint_ns = c.checkpoint_ns AND ps.checkpoint_id = c.parent_checkpoint_id
			AND ps.channel = '__pregel_tasks') END AS pending_sends
FROM {checkpoints} c`), "{thread}", thread)
	}
	q.selectTuple = pgcitus.Forms{tuple(lateralValues, "c.thread_id"), tuple(spreadValues, "c.thread_id")}
	q.selectTupleThread = tuple(lateralValues, "$1")
	q.getByID = q.selectTupleThread + `
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3`
	q.getLatest = q.selectTupleThread + `
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
ORDER BY c.checkpoint_id DESC LIMIT 1`

	// A Put in one statement (one cached statement whatever the number of
	// channels): its blob rows, then its checkpoint row. First write wins
	// for values: a (thread, ns, channel, version) names one value
	// forever. Rows flagged inline ($11) are the parent's Python-inline
	// values (see putBatch): they are inserted only when the parent's
	// document holds the channel inline at that version.
	//
	// $12 says the checkpoint inherits values from its parent $4
	// (core.Inherits): then the parent row is locked FOR KEY SHARE and,
	// when it is gone, nothing is inserted and the statement reports no
	// row (the driver returns checkpointer.ErrParentMissing). The lock is
	// what makes the check hold until the commit: every statement that
	// removes checkpoints (the sweep, Prune, DeleteThread,
	// DeleteCheckpoint, DeleteForRuns) first locks the rows it removes FOR
	// UPDATE, which conflicts with KEY SHARE, and works out which values
	// stay in a later statement. So either the put locks the parent first
	// and the remover, waiting for it, then sees the new checkpoint and
	// keeps what it reads (a sweep also finds the thread active again), or
	// the remover locks first and the put, waiting for it, finds the
	// parent gone. A plain check (EXISTS) would not do under READ
	// COMMITTED: a remover whose snapshot predates the put's commit
	// deletes the values the new checkpoint shares with its parent.
	//
	// ok has exactly one row unless the put is refused; it is referenced
	// twice, so PostgreSQL evaluates it once and both inserts see the
	// same decision. The parent is found by its primary key, once per
	// statement.
	q.putCkpt = f(`WITH parent AS (
	SELECT p.checkpoint AS doc FROM {checkpoints} p
	WHERE $12::boolean AND p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = $4
	FOR KEY SHARE
), ok AS (
	SELECT parent.doc FROM (VALUES (1)) AS one(x) LEFT JOIN parent ON true
	WHERE NOT $12::boolean OR parent.doc IS NOT NULL
), values_ AS (
	INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
	SELECT $1, $2, t.ch, t.ver, t.typ, t.bl
	FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[], $11::boolean[]) AS t(ch, ver, typ, bl, inl), ok
	WHERE NOT t.inl OR (ok.doc -> 'channel_values' ? t.ch AND ok.doc -> 'channel_versions' ->> t.ch = t.ver)
	ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)
INSERT INTO {checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT $1, $2, $3, $4, $5, $6 FROM ok
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`)

	writesInsert := `INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, i, ch, typ, bl FROM unnest($6::integer[], $7::text[], $8::text[], $9::bytea[]) AS t(i, ch, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) `
	q.insertWrites = f(writesInsert + `DO NOTHING`)
	q.upsertWrites = f(writesInsert + `DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`)

	// Many puts in one statement (group commit, writeRows): putCkpt
	// with one row of p per put, numbered k, and each value row naming
	// its put by k. The parents are locked FOR KEY SHARE as putCkpt locks
	// its one, in key order as the removers lock theirs (q.lock), so that
	// a group and a remover never wait for each other both; a put whose
	// parent is gone is left out of ok, inserts nothing, and its k is
	// missing from the statement's result. ok is
	// referenced three times and evaluated once, so every insert sees the
	// same decisions. The puts' checkpoint keys are distinct and none is
	// another's parent (writeRows sends such a put on its own): ON
	// CONFLICT DO UPDATE cannot change a row twice in one statement, and
	// a statement does not see its own inserts.
	q.putCkptRows = f(`WITH p AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[], $7::boolean[])
		WITH ORDINALITY AS p(thread_id, checkpoint_ns, checkpoint_id, parent_id, doc, meta, needs_parent, k)
), parent AS (
	SELECT p.k, c.checkpoint AS doc FROM p JOIN {checkpoints} c
		ON c.thread_id = p.thread_id AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.parent_id
	WHERE p.needs_parent
	ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id
	FOR KEY SHARE OF c
), ok AS (
	SELECT p.*, parent.doc AS parent_doc FROM p LEFT JOIN parent ON parent.k = p.k
	WHERE NOT p.needs_parent OR parent.doc IS NOT NULL
), values_ AS (
	INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
	SELECT ok.thread_id, ok.checkpoint_ns, t.ch, t.ver, t.typ, t.bl
	FROM unnest($8::bigint[], $9::text[], $10::text[], $11::text[], $12::bytea[], $13::boolean[]) AS t(k, ch, ver, typ, bl, inl)
	JOIN ok ON ok.k = t.k
	WHERE NOT t.inl OR (ok.parent_doc -> 'channel_values' ? t.ch AND ok.parent_doc -> 'channel_versions' ->> t.ch = t.ver)
	ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), checkpoints_ AS (
	INSERT INTO {checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
	SELECT thread_id, checkpoint_ns, checkpoint_id, parent_id, doc, meta FROM ok
	ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
)
SELECT k FROM ok`)

	// Many tasks' pending writes in one statement: one row of the
	// arrays per write. The upsert's keys are distinct (writeRows).
	writesRows := `INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::bytea[])
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) `
	q.insertWritesRows = f(writesRows + `DO NOTHING`)
	q.upsertWritesRows = f(writesRows + `DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`)

	// A page of thread ids after $1, from the primary key.
	q.threads = sqlrows.ThreadsSQL(q.checkpoints, "$1", "$2")
	q.rowThreads = sqlrows.RowThreadsSQL([]string{q.checkpoints, q.blobs, q.writes}, "$1", "$2")
	q.threadInfos = sqlrows.ThreadInfosSQL(q.checkpoints)

	// The heads of a removal: every checkpoint of the selected namespaces
	// with what the engine's rules read and, when asked, every orphan
	// write set. The rules read only whether a document's v is before 4:
	// a v of 4 (every put's) is one comparison, not three; a document
	// without a numeric v is read as current (4), as selectTuple reads
	// it (no pending sends). The parent only before 4, where the rules
	// read it: a string less to send and decode per head. The run ids
	// only for a selection by run: a
	// sweep's heads do not read every checkpoint's metadata. The orphans
	// are the write keys of the selection EXCEPT its checkpoints' keys: one
	// hashed pass over each table. As an anti join, PostgreSQL probed the
	// checkpoints once per write or merged the two on thread_id alone,
	// pairing every write with every checkpoint of its thread (3.5 ms of
	// a 100-checkpoint thread's prune; TestHeadsOrphansOnePass).
	heads := func(where, runID string) map[bool]string {
		before4 := `checkpoint -> 'v' < '4'::jsonb AND jsonb_typeof(checkpoint -> 'v') = 'number'`
		ckpts := f(`SELECT thread_id, checkpoint_ns, checkpoint_id, true,
	CASE WHEN ` + before4 + ` THEN coalesce(parent_checkpoint_id, '') ELSE '' END,
	CASE WHEN ` + before4 + ` THEN greatest(floor((checkpoint ->> 'v')::numeric), -1)::int ELSE 4 END,
	` + runID + `
FROM {checkpoints} WHERE ` + where)
		return map[bool]string{false: ckpts, true: ckpts + f(`
UNION ALL
SELECT thread_id, checkpoint_ns, checkpoint_id, false, '', 0, '' FROM (
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM {writes} WHERE `+where+`
	EXCEPT
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM {checkpoints} WHERE `+where+`) o`)}
	}
	// $2 NULL: every namespace.
	q.headsThreads = heads(`thread_id = ANY($1) AND ($2::text IS NULL OR checkpoint_ns = $2)`, `''`)
	q.headsRuns = heads(`(thread_id, checkpoint_ns) IN (SELECT thread_id, checkpoint_ns FROM {checkpoints} WHERE metadata ->> 'run_id' = ANY($1))`,
		`CASE WHEN jsonb_typeof(metadata -> 'run_id') = 'string' THEN metadata ->> 'run_id' ELSE '' END`)

	// The rows a removal is about to remove, FOR UPDATE and in key order
	// (concurrent removers do not deadlock). A put continuing one of them
	// holds it FOR KEY SHARE (see putCkpt), which conflicts: the lock
	// waits for such a put, and a put coming later waits for the removal
	// and finds its parent gone.
	q.lock = f(`SELECT 1 FROM {checkpoints}
WHERE thread_id = ANY($1) AND (thread_id, checkpoint_ns, checkpoint_id) IN (
	SELECT * FROM unnest($2::text[], $3::text[], $4::text[]))
ORDER BY thread_id, checkpoint_ns, checkpoint_id FOR UPDATE`)

	// A removal: the checkpoints ($2, $3, $4: thread, namespace, id) and
	// their writes, but for the __pregel_tasks writes of the ids $5, $6,
	// $7 (a kept v<4 checkpoint reads its pending sends from them); $1
	// their threads, so that each delete is an index range.
	q.remove = f(`WITH d AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS d(thread_id, checkpoint_ns, checkpoint_id)
), c AS (
	DELETE FROM {checkpoints} WHERE thread_id = ANY($1)
		AND (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT * FROM d)
	RETURNING 1
), w AS (
	DELETE FROM {writes} WHERE thread_id = ANY($1)
		AND (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT * FROM d)
		AND NOT (channel = '__pregel_tasks' AND (thread_id, checkpoint_ns, checkpoint_id) IN (
			SELECT * FROM unnest($5::text[], $6::text[], $7::text[])))
	RETURNING 1
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM w)`)

	// Value garbage collection in the threads $1 and namespaces $2 of a
	// removal: a value row lives while some checkpoint of its thread and
	// namespace has the channel at that version. It runs as a statement
	// after the deletes, so its snapshot includes every put they waited
	// for: a value a new checkpoint shares with a removed one stays. The
	// threads and the namespaces are two lists, not pairs: a value row of a
	// pair no removal names is collected only when it is garbage too, and
	// two lists keep the plan a hashed anti join of the threads' values
	// against the live versions. Paired (a semi join on unnest), the
	// planner guessed few rows and probed the checkpoints of the thread for
	// each value (a one-thread Prune of 100 checkpoints: 10 000 buffers
	// instead of 400). where selects the rows of both tables, {t} standing
	// for the table's alias (gcThreads has no namespace list).
	gc := func(where string) string {
		return f(`WITH live AS (
	SELECT c.thread_id, c.checkpoint_ns, cv.key AS channel, cv.value AS version
	FROM {checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') cv
	WHERE ` + strings.ReplaceAll(where, "{t}", "c") + `
), b AS (
	DELETE FROM {blobs} b WHERE ` + strings.ReplaceAll(where, "{t}", "b") + ` AND NOT EXISTS (
		SELECT 1 FROM live l WHERE l.thread_id = b.thread_id AND l.checkpoint_ns = b.checkpoint_ns
			AND l.channel = b.channel AND l.version = b.version)
	RETURNING 1
)
SELECT count(*) FROM b`)
	}
	q.gcBlobs = gc(`{t}.thread_id = ANY($1) AND {t}.checkpoint_ns = ANY($2)`)

	// DeleteThread: lockThreads first (as q.lock), then the checkpoints
	// and writes in one statement, then the values as garbage of the
	// threads (gcThreads): a checkpoint stored after lockThreads's snapshot is not
	// locked, so a put may continue it while the delete runs; the delete
	// waits for that put, which then stays, and the collection keeps every
	// value it reads.
	q.lockThreads = f(`SELECT 1 FROM {checkpoints} WHERE thread_id = ANY($1)
ORDER BY thread_id, checkpoint_ns, checkpoint_id FOR UPDATE`)
	q.deleteThreads = f(`WITH c AS (
	DELETE FROM {checkpoints} WHERE thread_id = ANY($1) RETURNING 1
), w AS (
	DELETE FROM {writes} WHERE thread_id = ANY($1) RETURNING 1
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM w)`)
	q.gcThreads = gc(`{t}.thread_id = ANY($1)`)

	// A prune (driver.KeepLatest), as the single batch before the driver
	// seam: keepLatest locks every checkpoint of the threads $1 but the
	// newest of its namespace, FOR UPDATE in key order as q.lock (the
	// lock waits for the puts continuing them; later ones find their
	// parent gone), and deletes them. The newest is not locked: a put
	// continuing it never waits. orphanWrites, a later statement whose
	// snapshot includes the puts the lock waited for, deletes the writes
	// of the threads whose checkpoint is not stored, but for the $2
	// (sends) writes of the parent of a stored checkpoint whose format is
	// before $3: a v<4 checkpoint a put stored during the wait reads them
	// too; in the same statement, as gcThreads, the values no stored
	// checkpoint references go (one snapshot for both: they touch
	// different tables).
	q.keepLatest = f(`WITH keep AS (
	SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id FROM {checkpoints}
	WHERE thread_id = ANY($1) ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
), locked AS (
	SELECT 1 FROM {checkpoints}
	WHERE thread_id = ANY($1) AND (thread_id, checkpoint_ns, checkpoint_id) NOT IN (SELECT * FROM keep)
	ORDER BY thread_id, checkpoint_ns, checkpoint_id FOR UPDATE
)
DELETE FROM {checkpoints} WHERE thread_id = ANY($1) AND (thread_id, checkpoint_ns, checkpoint_id) NOT IN (SELECT * FROM keep)
	AND (SELECT count(*) FROM locked) >= 0`)
	q.orphanWrites = strings.Replace(q.gcThreads, "WITH live AS (", f(`WITH w AS (
	DELETE FROM {writes} w WHERE w.thread_id = ANY($1) AND NOT EXISTS (
		SELECT 1 FROM {checkpoints} c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id
	) AND NOT (w.channel = $2 AND EXISTS (
		SELECT 1 FROM {checkpoints} k WHERE k.thread_id = w.thread_id AND k.checkpoint_ns = w.checkpoint_ns AND k.parent_checkpoint_id = w.checkpoint_id
			AND jsonb_typeof(k.checkpoint -> 'v') = 'number' AND k.checkpoint -> 'v' < to_jsonb($3::int)))
), live AS (`), 1)

	// Every row of a thread (CopyThread), and their copies, replacing the
	// destination's rows with the same keys.
	q.thread = sqlrows.Tables{Checkpoints: q.checkpoints, Blobs: q.blobs, Writes: q.writes}.ThreadSQL("$1")
	q.putCkptsCopy = f(`INSERT INTO {checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT $1, ns, id, nullif(p, ''), nullif(ty, ''), doc, md
FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[]) AS t(ns, id, p, doc, md, ty)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type,
	checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`)
	q.putBlobsCopy = f(`INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, ns, ch, ver, typ, bl FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) AS t(ns, ch, ver, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob`)
	q.putWritesCopy = f(`INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, ns, cid, tid, tp, i, ch, typ, bl
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::bytea[]) AS t(ns, cid, tid, tp, i, ch, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET task_path = EXCLUDED.task_path,
	channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`)
	return q
}
