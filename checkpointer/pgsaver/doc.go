// Package pgsaver is memvault's production checkpointer: LangGraph's
// PostgresSaver on pgx/v5, over the very tables Python and JS LangGraph use,
// so services in the three languages can share one database.
//
// # Usage
//
//	pool, err := pgxpool.New(ctx, dsn)
//	...
//	saver, err := pgsaver.New(pool, pgsaver.Options{})
//	...
//	if err := saver.Setup(ctx); err != nil { ... } // once, at start-up
//
//	cp := &checkpointer.Checkpoint{
//		V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
//		ChannelValues:   map[string]any{"messages": []any{"hello"}},
//		ChannelVersions: map[string]string{"messages": saver.NextVersion("")},
//	}
//	cfg, err := saver.Put(ctx, checkpointer.Config{ThreadID: "thread-1"}, cp,
//		checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
//	...
//	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "thread-1"})
//	...
//	for t, err := range saver.List(ctx, &cfg, checkpointer.ListOptions{Limit: 10}) { ... }
//
// (TestPackageDocSample runs this code.) New accepts a *pgxpool.Pool, a
// *pgx.Conn or a pgx.Tx; PutTx, PutWritesTx and DeleteThreadTx commit with
// a transaction of the caller's.
//
// # Compatibility
//
// Setup runs LangGraph's migrations 0..9 with LangGraph's exact DDL and
// numbering (table checkpoint_migrations), so Python's and JS's setup() find
// nothing to do on a database memvault set up, and Setup skips what they
// already did (JS stops at 4; Setup adds 5..9). memvault's own index lives in
// a separately tracked list (memvault_checkpoint_migrations). Setup holds an
// advisory lock, so concurrent calls from several processes are safe, and
// runs CREATE INDEX CONCURRENTLY outside transactions.
//
// Rows are written as LangGraph writes them: every channel value of a Put
// is a blob row keyed by (thread, namespace, channel, version), never inline
// in the checkpoint document ("empty" rows for channels without a value);
// the checkpoint document is EncodeCheckpointJSON's; metadata is plain JSONB
// with NUL characters removed. With the default serializer values are
// "json", readable by Python and JS; with VersionInt, versions are integers
// as JS requires (note that integer versions cannot tell a fork from the
// branch it left: a value re-written at an existing version keeps the first
// value, as in JS).
//
// Reads accept what Python and JS write: inline primitive values merged
// under blob values, msgpack and aes-encrypted blobs (through the
// serializer), string or integer versions, and v<4 checkpoints, whose
// pending sends (their parent's __pregel_tasks writes) become the
// __pregel_tasks channel. A thread Python started can be continued: when a
// Put's parent holds primitive values inline (Python writes no blob rows for
// them), the unchanged ones are written as blob rows at their versions in
// the same batch, so they survive the new checkpoint and any later Prune.
//
// # Performance
//
// Put sends the blob rows and the checkpoint row as one statement (after
// the key fence's, when there is one, in the same pipelined batch): one
// round trip and one implicit transaction, so a checkpoint is never stored
// without its values. A put that inherits values from its parent locks the
// parent FOR KEY SHARE and stores nothing (checkpointer.ErrParentMissing)
// when it is gone; the sweep, Prune and the deletes lock or delete the rows
// they remove before working out which values stay, so a checkpoint an
// agent resumes while they run keeps every value. Python and JS LangGraph
// writers sharing the tables take no such lock: a checkpoint they write
// continuing one a remover deletes meanwhile can lose the values it
// inherits. This relies on READ COMMITTED, PostgreSQL's default: each
// statement of a remover sees the puts it waited for. Under REPEATABLE
// READ or SERIALIZABLE (a database's default_transaction_isolation, or a
// caller's transaction given to a …Tx twin) a remover's statements share
// one snapshot and may keep a checkpoint without a value it inherits:
// run the removers at READ COMMITTED. GetTuple and List are one
// statement each, returning each checkpoint with its
// values and pending writes as two-dimensional bytea arrays; List decodes
// rows as they arrive and holds one row at a time. PutWrites is one
// statement. The saver holds no lock of its own: over a pool, operations run
// in parallel.
//
// The memvault index on checkpoints(thread_id, checkpoint_id) serves
// listings across namespaces and paging with Before. There is no GIN index on
// metadata: filters scoped to a thread gain nothing from one (the planner
// narrows by thread first), only filters across all threads do, and it
// slows every insert. Deployments that filter across threads can add
// CREATE INDEX ... USING gin (metadata jsonb_path_ops) themselves.
//
// # Encryption
//
// With an encrypting serializer (serde.Encrypted), blob and write payloads
// are encrypted and bound to where they live (associated data of every coordinate):
// a row copied to another thread does not decrypt, and CopyThread
// re-encrypts for the destination thread. Ids, namespaces, channel names,
// versions, types, task ids and paths, and metadata stay plaintext (they
// are what the queries select and filter on); so do the inline values of
// rows Python wrote.
//
// # Citus
//
// On a Citus (distributed PostgreSQL) coordinator, Setup distributes the
// three tables by thread_id, colocated, so that every row of a thread
// lives on one shard: a statement that names one thread routes to that
// shard, and a transaction on one thread is local to one worker. Existing
// rows move into the shards and leave no copy on the coordinator
// (pgcitus.Distribute). The statements are those of plain PostgreSQL,
// written so that Citus can run them (see queries.go), but for two
// forms: a list across threads (queries.selectTuple, a pgcitus.Forms)
// and the removals' row locks, one statement per thread (pgcitus.EachGroup,
// pgcitus.EachValue). Whether the database is a coordinator is asked once
// per Saver (pgcitus.Topology).
package pgsaver
