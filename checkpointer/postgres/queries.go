package postgres

import "strings"

// queries holds every statement with the table names filled in, built once
// per Saver so hot paths do no string work and pgx's statement cache sees the
// same text each time.
type queries struct {
	schema                     string
	checkpoints, blobs, writes string // table names, qualified and quoted when a schema is set

	selectTuple   string // SELECT ... FROM checkpoints c, ready for a WHERE
	getByID       string
	getLatest     string
	putCkpt       string
	insertWrites  string
	upsertWrites  string
	deleteThreads string
	runDelete     string
	pruneCkpts    string
	gcBlobs       string
	ckptDelete    string
	copyCkpts     string
	copyBlobs     string
	copyWrites    string
	srcBlobs      string
	srcWrites     string
	insBlobsCopy  string
	insWritesCopy string
	sweepThreads  string
	sweepIdle     string
	deleteLocked  string
	sweepLock     string
	lockThreads   string
	lockCkpt      string
	lockRuns      string
}

func buildQueries(schema string) queries {
	q := queries{
		schema:      schema,
		checkpoints: ident(schema, "checkpoints"),
		blobs:       ident(schema, "checkpoint_blobs"),
		writes:      ident(schema, "checkpoint_writes"),
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
	q.selectTuple = f(`SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
	(SELECT array_agg(array[convert_to(cv.key, 'UTF8'), convert_to(cv.value, 'UTF8'), convert_to(bl.type, 'UTF8'), bl.blob])
		FROM jsonb_each_text(c.checkpoint -> 'channel_versions') cv
		CROSS JOIN LATERAL (SELECT b.type, b.blob FROM {blobs} b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
			AND b.channel = cv.key AND b.version = cv.value OFFSET 0) bl) AS channel_values,
	(SELECT array_agg(array[convert_to(cw.task_id, 'UTF8'), convert_to(cw.idx::text, 'UTF8'), convert_to(cw.channel, 'UTF8'), convert_to(coalesce(cw.type, ''), 'UTF8'), cw.blob] ORDER BY cw.task_id, cw.idx)
		FROM {writes} cw
		WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id) AS pending_writes,
	CASE WHEN c.parent_checkpoint_id IS NOT NULL AND jsonb_typeof(c.checkpoint -> 'v') = 'number' AND (c.checkpoint -> 'v') < '4'::jsonb THEN
	(SELECT array_agg(array[convert_to(ps.task_id, 'UTF8'), convert_to(ps.idx::text, 'UTF8'), convert_to(coalesce(ps.type, ''), 'UTF8'), ps.blob] ORDER BY ps.task_path, ps.task_id, ps.idx)
		FROM {writes} ps
		WHERE ps.thread_id = c.thread_id AND ps.checkpoint_ns = c.checkpoint_ns AND ps.checkpoint_id = c.parent_checkpoint_id
			AND ps.channel = '__pregel_tasks') END AS pending_sends
FROM {checkpoints} c`)
	q.getByID = q.selectTuple + `
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3`
	q.getLatest = q.selectTuple + `
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

	// DeleteThread, after lockThreads: the threads' checkpoints and
	// writes in one statement; their values go in a later one (gcBlobs),
	// whose snapshot includes the puts this one waited for. A checkpoint
	// stored after lockThreads's snapshot is not locked, so a put may
	// continue it while this statement deletes it: the delete waits for
	// that put, which then stays (this snapshot predates it), and gcBlobs
	// keeps every value it reads. Deleting every value of the threads
	// instead left it without any.
	q.deleteThreads = f(`WITH c AS (
	DELETE FROM {checkpoints} WHERE thread_id = ANY($1)
)
DELETE FROM {writes} WHERE thread_id = ANY($1)`)

	// Prune keep_latest: drop every checkpoint but the newest of each
	// (thread, namespace), with their writes, except the __pregel_tasks
	// writes a kept v<4 checkpoint reads its pending sends from (they hang
	// off its parent, which goes).
	q.pruneCkpts = f(`WITH keep AS (
	SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint -> 'v' AS v
	FROM {checkpoints} WHERE thread_id = ANY($1)
	ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
), gone AS (
	DELETE FROM {checkpoints} c WHERE c.thread_id = ANY($1) AND NOT EXISTS (
		SELECT 1 FROM keep k WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns AND k.checkpoint_id = c.checkpoint_id)
	RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
)
DELETE FROM {writes} w USING gone g
WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns AND w.checkpoint_id = g.checkpoint_id
	AND NOT (w.channel = '__pregel_tasks' AND EXISTS (
		SELECT 1 FROM keep k WHERE k.thread_id = g.thread_id AND k.checkpoint_ns = g.checkpoint_ns AND k.parent_checkpoint_id = g.checkpoint_id
			AND jsonb_typeof(k.v) = 'number' AND k.v < '4'::jsonb))`)

	// Blob garbage collection: a blob row lives while some checkpoint of its
	// thread and namespace has the channel at that version. Must run as a
	// statement after the deletes so it sees them.
	q.gcBlobs = f(`WITH live AS (
	SELECT c.thread_id, c.checkpoint_ns, cv.key AS channel, cv.value AS version
	FROM {checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') cv
	WHERE c.thread_id = ANY($1)
)
DELETE FROM {blobs} b WHERE b.thread_id = ANY($1) AND NOT EXISTS (
	SELECT 1 FROM live l WHERE l.thread_id = b.thread_id AND l.checkpoint_ns = b.checkpoint_ns
		AND l.channel = b.channel AND l.version = b.version)`)

	// DeleteForRuns, after lockRuns, in one statement: the checkpoints
	// whose metadata.run_id is one of $1 (doomed), their writes, and the
	// values of their threads no other checkpoint references. The CTEs
	// share one snapshot, so the live set is computed from the
	// checkpoints that are not being deleted rather than from the table
	// after the delete. As in Prune, the __pregel_tasks writes of a
	// deleted checkpoint stay while a surviving v<4 child reads its
	// pending sends from them.
	//
	// doomed takes its rows FOR UPDATE SKIP LOCKED. The rows lockRuns
	// locked are ours; a checkpoint of the runs stored since lockRuns's
	// snapshot is not, and a put may be continuing it (holding it FOR KEY
	// SHARE) while this statement runs: deleting it would wait for that
	// put and then, from a snapshot that predates it, delete the values
	// the put shares with it. Such a checkpoint is skipped: it stays,
	// with its values, as if stored after the delete. Any other is
	// locked here, and a put coming later finds it gone.
	q.runDelete = f(`WITH doomed AS (
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM {checkpoints} WHERE metadata ->> 'run_id' = ANY($1)
	FOR UPDATE SKIP LOCKED
), gone AS (
	DELETE FROM {checkpoints} c USING doomed d
	WHERE c.thread_id = d.thread_id AND c.checkpoint_ns = d.checkpoint_ns AND c.checkpoint_id = d.checkpoint_id
	RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
), w AS (
	DELETE FROM {writes} w USING gone g
	WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns AND w.checkpoint_id = g.checkpoint_id
		AND NOT (w.channel = '__pregel_tasks' AND EXISTS (
			SELECT 1 FROM {checkpoints} k WHERE k.thread_id = g.thread_id AND k.checkpoint_ns = g.checkpoint_ns
				AND k.parent_checkpoint_id = g.checkpoint_id
				AND (k.thread_id, k.checkpoint_ns, k.checkpoint_id) NOT IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM doomed)
				AND jsonb_typeof(k.checkpoint -> 'v') = 'number' AND (k.checkpoint -> 'v') < '4'::jsonb))
), threads AS (
	SELECT DISTINCT thread_id FROM gone
), live AS (
	SELECT c.thread_id, c.checkpoint_ns, cv.key AS channel, cv.value AS version
	FROM {checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') cv
	WHERE c.thread_id IN (SELECT thread_id FROM threads)
		AND (c.thread_id, c.checkpoint_ns, c.checkpoint_id) NOT IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM doomed)
)
DELETE FROM {blobs} b WHERE b.thread_id IN (SELECT thread_id FROM threads) AND NOT EXISTS (
	SELECT 1 FROM live l WHERE l.thread_id = b.thread_id AND l.checkpoint_ns = b.checkpoint_ns
		AND l.channel = b.channel AND l.version = b.version)`)

	// DeleteCheckpoint: every part of the statement sees the rows as they
	// were before it, so the checkpoint itself is left out of "live"
	// explicitly.
	q.ckptDelete = f(`WITH gone AS (
	DELETE FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
	RETURNING checkpoint
), w AS (
	-- A v<4 child reads its pending sends from these __pregel_tasks writes.
	DELETE FROM {writes} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
		AND NOT (channel = '__pregel_tasks' AND EXISTS (
			SELECT 1 FROM {checkpoints} k WHERE k.thread_id = $1 AND k.checkpoint_ns = $2 AND k.parent_checkpoint_id = $3
				AND jsonb_typeof(k.checkpoint -> 'v') = 'number' AND (k.checkpoint -> 'v') < '4'::jsonb))
), versions AS (
	SELECT cv.key AS channel, cv.value AS version FROM gone CROSS JOIN LATERAL jsonb_each_text(gone.checkpoint -> 'channel_versions') cv
)
DELETE FROM {blobs} b USING versions v
WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = v.channel AND b.version = v.version
	AND NOT EXISTS (SELECT 1 FROM {checkpoints} c
		WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id <> $3
			AND c.checkpoint -> 'channel_versions' ->> v.channel = v.version)`)

	// CopyThread copies checkpoints first, then values, then writes: each
	// statement sees writes committed since the one before, so a Put
	// running meanwhile can add values no copied checkpoint needs, never a
	// copied checkpoint without its values. Every row of the source is
	// copied, writes whose checkpoint is not stored included, and replaces
	// the destination's row with the same key, as on every backend.
	q.copyCkpts = f(`INSERT INTO {checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM {checkpoints} WHERE thread_id = $1
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
	type = EXCLUDED.type, checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`)
	q.copyBlobs = f(`INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $2, checkpoint_ns, channel, version, type, blob FROM {blobs} WHERE thread_id = $1
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob`)
	q.copyWrites = f(`INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob FROM {writes} WHERE thread_id = $1
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET task_path = EXCLUDED.task_path,
	channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`)

	// Re-encrypting copy: keyset pages of the source rows.
	q.srcBlobs = f(`SELECT checkpoint_ns, channel, version, type, blob FROM {blobs}
WHERE thread_id = $1 AND ($6 OR (checkpoint_ns, channel, version) > ($2, $3, $4))
ORDER BY checkpoint_ns, channel, version LIMIT $5`)
	q.srcWrites = f(`SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, coalesce(type, ''), blob FROM {writes}
WHERE thread_id = $1 AND ($7 OR (checkpoint_ns, checkpoint_id, task_id, idx) > ($2, $3, $4, $5))
ORDER BY checkpoint_ns, checkpoint_id, task_id, idx LIMIT $6`)
	q.insBlobsCopy = f(`INSERT INTO {blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, ns, ch, ver, typ, bl FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) AS t(ns, ch, ver, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob`)
	q.insWritesCopy = f(`INSERT INTO {writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, ns, cid, tid, tp, i, ch, typ, bl
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::bytea[]) AS t(ns, cid, tid, tp, i, ch, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET task_path = EXCLUDED.task_path,
	channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`)

	// Sweep: a page of thread ids after $1, from the primary key.
	q.sweepThreads = f(`SELECT DISTINCT thread_id FROM {checkpoints} WHERE thread_id > $1 ORDER BY thread_id LIMIT $2`)
	// Sweep, IdleTTL: the threads of $1 whose ids are all lowercase
	// UUIDv6 (36 characters, lowercase hex but for the four dashes, the
	// version digit 6: checkpointer.IsDatableID, without a regular
	// expression, which costs ten times more per row) and all sort
	// (bytewise, whatever the database's collation) before the floor $2
	// go whole; counts of threads, checkpoints,
	// writes and values. The deletes repeat thread_id = ANY($1) so that
	// each stays an index range over the batch.
	q.sweepIdle = f(`WITH idle AS (
	SELECT thread_id FROM {checkpoints} WHERE thread_id = ANY($1) GROUP BY thread_id
	HAVING max(checkpoint_id COLLATE "C") < ($2::text COLLATE "C")
		AND bool_and(length(checkpoint_id) = 36 AND translate(checkpoint_id, '0123456789abcdef', '') = '----'
			AND substr(checkpoint_id, 9, 1) || substr(checkpoint_id, 14, 2) || substr(checkpoint_id, 19, 1) || substr(checkpoint_id, 24, 1) = '--6--')
), c AS (
	DELETE FROM {checkpoints} WHERE thread_id = ANY($1) AND thread_id IN (SELECT thread_id FROM idle) RETURNING 1
), w AS (
	DELETE FROM {writes} WHERE thread_id = ANY($1) AND thread_id IN (SELECT thread_id FROM idle) RETURNING 1
), b AS (
	DELETE FROM {blobs} WHERE thread_id = ANY($1) AND thread_id IN (SELECT thread_id FROM idle) RETURNING 1
)
SELECT (SELECT count(*) FROM idle), (SELECT count(*) FROM c), (SELECT count(*) FROM w), (SELECT count(*) FROM b)`)
	// Sweep, first statement of a batch: lock, FOR UPDATE and in key
	// order (so concurrent sweeps do not deadlock), the checkpoints the
	// batch may remove: every row of the threads of $1 that look idle at
	// the floor $2 (NULL: no IdleTTL), and the rows ranked beyond the
	// newest $3 of their (thread, namespace) ($3 = 0: no KeepLatest).
	// Taking the locks waits for every put continuing one of these rows
	// (it holds its parent FOR KEY SHARE, see putCkpt), and a put that
	// comes later waits for the sweep and finds its parent gone. The
	// deletes run in later statements, whose snapshots include the puts
	// waited for: an idle thread resumed meanwhile is no longer idle, and
	// a value a new checkpoint shares with a removed one stays. Returned:
	// the idle threads once each (idle true), and every row to prune.
	q.sweepLock = f(`WITH idle AS (
	SELECT thread_id FROM {checkpoints} WHERE $2::text IS NOT NULL AND thread_id = ANY($1) GROUP BY thread_id
	HAVING max(checkpoint_id COLLATE "C") < ($2::text COLLATE "C")
		AND bool_and(length(checkpoint_id) = 36 AND translate(checkpoint_id, '0123456789abcdef', '') = '----'
			AND substr(checkpoint_id, 9, 1) || substr(checkpoint_id, 14, 2) || substr(checkpoint_id, 19, 1) || substr(checkpoint_id, 24, 1) = '--6--')
), ranked AS (
	SELECT thread_id, checkpoint_ns, checkpoint_id FROM (
		SELECT thread_id, checkpoint_ns, checkpoint_id,
			row_number() OVER (PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn
		FROM {checkpoints} WHERE $3::int > 0 AND thread_id = ANY($1)) r
	WHERE rn > $3::int
), locked AS (
	SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.thread_id IN (SELECT thread_id FROM idle) AS idle,
		(c.thread_id, c.checkpoint_ns, c.checkpoint_id) IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM ranked) AS doomed
	FROM {checkpoints} c
	WHERE c.thread_id = ANY($1) AND (c.thread_id IN (SELECT thread_id FROM idle)
		OR (c.thread_id, c.checkpoint_ns, c.checkpoint_id) IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM ranked))
	ORDER BY c.thread_id, c.checkpoint_ns, c.checkpoint_id
	FOR UPDATE OF c
)
SELECT DISTINCT thread_id, '', '', true FROM locked WHERE idle
UNION ALL
SELECT thread_id, checkpoint_ns, checkpoint_id, false FROM locked WHERE doomed`)
	// Sweep, KeepLatest: the rows sweepLock locked to prune ($2, $3, $4:
	// thread, namespace and id of each; $1 their threads) go with their
	// writes, but for the __pregel_tasks writes a kept v<4 checkpoint
	// reads its pending sends from; then, in the threads that lost a
	// checkpoint, the values no remaining checkpoint references. The CTEs
	// share one snapshot, so "remaining" is every checkpoint but the
	// pruned ones, those committed since the lock included. Every delete
	// is bounded by thread_id = ANY($1), so each is an index range, never
	// a scan of the table, whatever the planner guesses of the CTEs' sizes
	// (it guesses one row); the dead values are an EXCEPT, which
	// PostgreSQL hashes, not an anti-join it would run as a nested loop
	// on that guess.
	q.deleteLocked = f(`WITH d AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS d(thread_id, checkpoint_ns, checkpoint_id)
), gone AS (
	DELETE FROM {checkpoints} c WHERE c.thread_id = ANY($1)
		AND (c.thread_id, c.checkpoint_ns, c.checkpoint_id) IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM d)
	RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
), w AS (
	DELETE FROM {writes} w USING gone g
	WHERE w.thread_id = ANY($1) AND w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns AND w.checkpoint_id = g.checkpoint_id
		AND NOT (w.channel = '__pregel_tasks' AND EXISTS (
			SELECT 1 FROM {checkpoints} k
			WHERE k.thread_id = g.thread_id AND k.checkpoint_ns = g.checkpoint_ns AND k.parent_checkpoint_id = g.checkpoint_id
				AND (k.thread_id, k.checkpoint_ns, k.checkpoint_id) NOT IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM d)
				AND jsonb_typeof(k.checkpoint -> 'v') = 'number' AND (k.checkpoint -> 'v') < '4'::jsonb))
	RETURNING 1
), touched AS (
	SELECT DISTINCT thread_id FROM gone
), dead AS (
	SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version FROM {blobs} b
	WHERE b.thread_id = ANY($1) AND b.thread_id IN (SELECT thread_id FROM touched)
	EXCEPT
	SELECT c.thread_id, c.checkpoint_ns, cv.key, cv.value
	FROM {checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') cv
	WHERE c.thread_id = ANY($1) AND c.thread_id IN (SELECT thread_id FROM touched)
		AND (c.thread_id, c.checkpoint_ns, c.checkpoint_id) NOT IN (SELECT thread_id, checkpoint_ns, checkpoint_id FROM d)
), b AS (
	DELETE FROM {blobs} b USING dead d
	WHERE b.thread_id = d.thread_id AND b.checkpoint_ns = d.checkpoint_ns AND b.channel = d.channel AND b.version = d.version
	RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM w), (SELECT count(*) FROM b)`)

	// Removers other than the sweep lock the checkpoints they remove
	// first, in the same transaction (see putCkpt): DeleteThread…
	q.lockThreads = f(`SELECT 1 FROM {checkpoints} WHERE thread_id = ANY($1)
ORDER BY thread_id, checkpoint_ns, checkpoint_id FOR UPDATE`)
	// …DeleteCheckpoint…
	q.lockCkpt = f(`SELECT 1 FROM {checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 FOR UPDATE`)
	// …and DeleteForRuns (see runDelete).
	q.lockRuns = f(`SELECT 1 FROM {checkpoints} WHERE metadata ->> 'run_id' = ANY($1)
ORDER BY thread_id, checkpoint_ns, checkpoint_id FOR UPDATE`)
	return q
}
