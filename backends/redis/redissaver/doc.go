// Package redissaver is memvault's checkpointer on Redis: the engine of
// checkpointer/engine over a driver that keeps checkpoints in plain Redis
// data types — hashes, sorted sets and strings — so it runs on any Redis
// 7 or 8 server, a Redis Cluster, and servers speaking the same commands,
// with no module (no RedisJSON, no RediSearch).
//
// # Usage
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
//	saver, err := redissaver.New(rdb, redissaver.Options{})
//
// Nothing needs setting up on the server. A *redis.ClusterClient works the
// same way (the suite passes on a three-master cluster of each version).
// The Saver is a checkpointer.Saver with every optional
// capability (prune, copy, delete by run, retention sweep, import,
// re-encryption); every rule comes from the engine, and
// checkpointertest.Run passes on it in full on Redis 8.0.6 and Redis
// 7.0.15, plaintext, encrypted and with per-subject keys (tests run real
// servers, see backends/redis/redistest).
//
// # Layout
//
// Every key of a thread holds the thread's hash tag, so a thread lives in
// one cluster slot and one script or MULTI can change all of it. With P
// = "<prefix>:{<thread>}:" (prefix "memvault:cp" by default; '%' and '}'
// in the thread id escaped as %25 and %7D) and "·" a NUL byte (no
// identifier holds one):
//
//	P:cp            HASH  ns·id -> checkpoint record: type, document (JSON), metadata (JSON)
//	P:par           HASH  ns·id -> parent checkpoint id ("" for none); the first one stays
//	P:hd            HASH  ns·id -> head record: format version, metadata run_id,
//	                      a stamp new at every write, the channel versions
//	P:ns            ZSET  ns·id, score 0: a namespace's checkpoints in id order
//	P:id            ZSET  id·ns, score 0: the thread's checkpoints in id order
//	P:val           HASH  ns·channel·version -> value record: serde type, bytes
//	P:wk            ZSET  ns·id, score 0: the checkpoints holding pending writes
//	P:w:<ns>·<id>   HASH  task·idx -> write record: task path, channel, serde type, bytes
//	P:lock          STRING the token of the operation holding the thread (a lease)
//	<prefix>:threads ZSET thread ids, score 0: every thread holding a key
//	<prefix>:threads:complete STRING set once older versions' threads
//	                are indexed (see Erasure)
//	<prefix>:fence  STRING the erasure fence token (per slot on a cluster:
//	                <prefix>:fence:{tag}; see Erasure)
//
// Records are length-prefixed byte strings. Values and writes are stored
// as the engine sealed them: encrypted and bound to their thread,
// namespace, channel and version when the serializer encrypts. List pages
// come from the sorted sets by lexical range (ZRANGEBYLEX): the latest
// checkpoint of a namespace is the last member of P:ns under "ns·";
// `before` is an exclusive upper bound; a listing reads the ids first,
// then the records 64 at a time, two round trips per page. Listing every
// thread, thread listings and deletion by run id go through
// <prefix>:threads and read each thread's indexes: a pass over the
// threads, as a SQL backend's over its rows; a listing across threads
// reads the ids of 256 threads per pipeline.
//
// # Transactions on a server without rollback
//
// Redis has no rollback: a MULTI runs every command even when one fails,
// and a Lua script that fails half-way keeps what it wrote. The driver
// makes every change one Lua script on one thread's keys, written so that
// it can only fail before its first write (a server out of memory
// refuses a script's first write, never a later one): the script checks the thread's
// lock and its guards (the parent a put continues must be stored), then
// writes. A put is one script (HSET, HSETNX for the first parent and for
// values already stored, ZADD; on Redis 8 its values in one HSETEX FNX
// when none is stored); so is a task's pending writes, and each removal
// of one thread.
//
// A large put (more than 6 KiB of new values) or task's pending writes
// (more than 3 KiB of records) is one MULTI/EXEC instead, so that its
// bytes do not enter Lua (each costs the server ~12 instructions there,
// ~1.2 as a plain command's argument): EVAL of a check script (the same
// checks and small writes, without the values or writes), then the
// values (HSETNX) or writes (HSETNX, or HSET to replace) as plain
// commands, then RENAME P:val· P:val and HDEL P:val "" (the writes hash
// likewise). When the check refuses (LOCKED, LOST, FENCED, MISSING), it
// poisons that key first: it adds the empty field "", renames the key to
// its hold name (the key and a NUL byte) and sets the key to a string,
// so the plain writes fail with WRONGTYPE; the RENAME then puts the hash
// back over the string and the HDEL drops the empty field (and the key,
// when it held nothing before). A refused write therefore leaves nothing
// behind: no value or write field, no hold key, no string — no orphan to
// sweep, nothing sealed under an erased subject's keys. EXEC runs it all
// with no other client in between, so no reader sees a poisoned key. When
// the check passes, the RENAME fails (no hold key; expected) and the HDEL
// finds nothing. The check is sent with EVAL, not EVALSHA: inside MULTI a
// script missing from the server's cache (after a restart, a failover,
// SCRIPT FLUSH) fails with NOSCRIPT and the commands after it run
// anyway, unchecked. A server out of memory refuses the whole EXEC.
// Small writes keep one EVALSHA: MULTI costs ~5 000 instructions per
// queued command and EVAL ~45 000 for hashing its source, more than the
// bench's ~2.5 KB put spends on its bytes in Lua. Reads are MULTI blocks: a checkpoint's record,
// parent and writes in one, its values and its head in a second; a
// checkpoint written again or removed between the two (its stamp
// changed) is read again, and since a removal deletes a checkpoint and
// the values only it referenced in one script, a checkpoint seen
// unchanged has all its values.
// A Saver remembers the heads it wrote or read last (a few thousand):
// reading one of those checkpoints again, it asks for the values that
// head references in the first MULTI, and uses them only when the head
// read there holds the same stamp, so a read after a put of the same
// process is one round trip (the latest: two, its id first), and a
// checkpoint changed by another process costs the second MULTI, never a
// wrong read.
//
// Removals, copies, imports and re-encryption run in an Update, which
// locks the threads it changes: SET P:lock <token> NX PX <lease>, renewed
// every lease/3 while it runs (Options.Lease, 30 s by default). Every
// script checks the lock: a put or pending writes from any process wait
// while another operation holds the thread, and an Update's own scripts
// carry its token, so a change made after its lease ran out (a stalled
// process) is refused with ErrLockLost instead of interleaving with
// another writer. Removals lock the threads named by the checkpoints
// they picked, then read the heads again (DriverTx.Lock), so a put that
// ran first is seen and one that comes later waits. An import's puts and
// pending writes only set hash fields and add sorted-set members: before
// each, the Update saves what those fields and members held (one
// round trip, whatever the thread holds), and a failure puts them back
// in one script, still holding the lock. Before the first removal,
// deletion or overwrite of a thread, an Update saves its keys with DUMP
// (before, every change did, so each batch checkpointer/durable writes —
// an import — copied the whole thread to the client); when the Update
// fails, it puts them back in one script, still holding the lock: it
// RESTOREs every saved key to a hold name in the thread's slot (the key,
// a NUL byte, "rollback") first, and only when all succeeded deletes the
// thread's keys and RENAMEs the holds back, so a refused RESTORE changes
// nothing. Before an Update's first save the driver checks once that the
// server lets it RESTORE (a DUMP of the thread's lock restored to its
// hold name and deleted, in one script); an ACL without it makes every
// Update fail before its first change. What this does not cover: a process that dies in the middle of a
// multi-thread Update leaves the threads it had finished changed (each
// thread's change is whole); the lease then frees the rest.
//
// Two Updates locking the same threads in opposite orders (possible only
// for a copy against a removal) would wait for each other: one holding a
// lock waits at most one lease for another, then fails with ErrLockWait
// and changes nothing.
//
// # Erasure
//
// With per-subject keys, a write of a subject's values checks that the
// keys that sealed them are live (the key table is outside Redis), then
// runs its script. So that an erasure in any process cannot fall between
// the two, every fenced script also checks a fence token (<prefix>:fence
// on one server; on a cluster <prefix>:fence:{tag} for every slot, tag
// chosen to hash to that slot, so a thread's script reaches its slot's
// token): the write reads the token it last saw before checking its
// keys, and the script changes nothing (and the write checks again and
// retries) unless the key still holds it. Saver.DrainWrites, which an
// erasure calls after destroying the keys and before deleting the
// subject's threads, sets every fence key to a fresh random token: from
// then on a write stores only after a key check that sees the keys gone,
// in every process. The token is random, not a counter, so that a server
// restarted from an older snapshot (which rolls the fence key back) can
// never hold again a value a writer cached. A refused put takes its
// thread out of the thread index again before it returns. Writes of a
// serializer without per-subject keys carry no fence and check nothing.
// The fence keys must not be evicted (run Redis with maxmemory-policy
// noeviction, as memvault's data needs anyway).
//
// The fence needs every thread's script to reach the fence key of its
// own slot: a *redis.Client (one server, or a Sentinel failover client)
// or a *redis.ClusterClient. A *redis.Ring shards keys by name on the
// client side, so a thread's script and DrainWrites would reach
// different servers: New refuses a Ring, and any other client type,
// when the serializer keeps per-subject keys (ErrOptions).
//
// An erasure finds a subject's threads in <prefix>:threads
// (RowThreads): every thread holding any key — checkpoints, values or
// pending writes, a thread whose pending writes came before its first
// put or outlived its checkpoints included. On one server (a
// *redis.Client), a put's and pending writes' scripts add the thread to
// it with their writes, atomically: each is one command. On a cluster
// <prefix>:threads lies outside the threads' slots, so it is kept beside
// the scripts, not in them: a thread is added before its first put or
// pending writes (a refused entry stores nothing; an entry whose thread
// holds nothing is skipped by readers). Puts and pending writes of a
// thread this saver indexed before skip that round trip (one round trip
// each); their script then refuses (and the thread is indexed again) when
// the thread holds nothing, since a deletion may have taken its entry
// out. Either way the entry is
// removed under the thread's lock when the thread is deleted. Versions
// before this one indexed a thread at its first put only: the first
// RowThreads of a saver on a prefix without <prefix>:threads:complete
// SCANs the prefix's keys (every master of a cluster), indexes every
// thread found and sets that key; delete it to scan again (after a
// process of an older version wrote pending writes meanwhile).
//
// # ACL
//
// The saver runs scripts (EVALSHA, EVAL, SCRIPT LOAD) and MULTI/EXEC over
// string, hash and sorted-set commands, RENAME and DEL on its own keys,
// and DUMP and RESTORE, which removals, copies and re-encryption need to
// roll back a failed change (imports do not). RESTORE is in the @dangerous
// category: under "+@all -@dangerous" puts, pending writes, reads and
// listings work, but every such Update fails before its first change
// with an error naming RESTORE (TestReviewS26RollbackWithoutRestore).
// "+@all -@dangerous +restore" runs everything (TestRollbackRestrictedACL).
//
// # Durability
//
// A put is acknowledged when the server has applied it. With Redis'
// defaults (RDB snapshots, no append-only file) a crash loses what was
// written since the last snapshot. With appendonly yes and appendfsync
// always, a script's writes reach the disk before the reply: kill -9 of
// the server loses no acknowledged checkpoint (tested). appendfsync
// everysec loses at most about a second.
//
// # Cancellation and time-outs
//
// go-redis ends a command waiting on the server at the context's
// deadline only when the client has ContextTimeoutEnabled (otherwise at
// its ReadTimeout, 3 s by default), and never on a cancellation. By
// default reads, listings, puts and pending writes run their commands in
// the caller's goroutine, as a go-redis command does: a cancelled call
// ends when the server answers, at its context's deadline or at the
// client's ReadTimeout (TestCancelDefault). With Options.ReturnOnCancel
// each runs its commands in a goroutine of its own and returns the
// context's error as soon as it ends (TestCancelBlockedServer, against a
// server that stops answering); the abandoned command finishes or times
// out in the background, and a put abandoned so may still be stored, as
// any write whose reply is lost. That hand-off costs about 25 µs of CPU
// and of latency per call on a loaded two-core machine, as much as a raw
// command, which is why it is not the default. Waits for a thread's lock
// end with the context either way. Update (removals, copies, imports,
// re-encryption) is not abandoned half-way: it stops at its next
// command, bounded by the deadline with ContextTimeoutEnabled, and rolls
// back. Create clients with ContextTimeoutEnabled: true.
//
// # Not LangGraph's layout
//
// LangGraph's Redis packages (Python langgraph-checkpoint-redis, JS
// @langchain/langgraph-checkpoint-redis) store JSON documents with
// RedisJSON and find them with RediSearch indexes, so they need Redis
// Stack or a Redis 8 built with those modules; the JS and Python layouts
// also differ from each other. This layout needs neither, and neither
// package reads it.
package redissaver
