// Package trpcagent makes memvault the persistence layer of tRPC-Agent-Go
// (trpc.group/trpc-go/trpc-agent-go): CheckpointSaver is its graphs'
// graph.CheckpointSaver on any memvault checkpointer, SessionService its
// session.Service and MemoryService its memory.Service on any memvault
// store — SQLite by default, PostgreSQL in production, encrypted when the
// checkpointer's serializer or the store's is.
//
// # Checkpoints
//
// A lineage is a memvault thread, a checkpoint namespace a memvault
// namespace and a checkpoint a memvault checkpoint with the same parent, so
// memvault's tools (list, export, fork, prune, key rotation) work on
// tRPC-Agent-Go's state. tRPC's checkpoint ids are random UUIDs, while
// memvault's sort by time (the latest is the greatest), so the memvault
// checkpoint gets a time-ordered id of its own and the tRPC id is kept in
// its metadata ("trpc_id"); a lookup by tRPC id is one filtered query over
// the lineage. tRPC's checkpoint carries fields memvault's
// model has no place for (barrier sets, pending sends, interrupt state, next
// nodes), so the whole checkpoint is kept, as tRPC's own savers keep it
// (JSON: numbers come back as float64), in one channel of the memvault
// checkpoint, sealed and bound to it. Metadata (source, step, parents,
// extra) is memvault's plaintext, filterable metadata, except the Extra
// entries in which tRPC puts graph state — graph_interrupt_inputs, the
// input state of each next node that a run paused through
// graph.WithGraphInterrupt saves —, which are sealed in a channel of
// their own ("trpc:extra") and cannot be filtered on. Pending writes are
// memvault pending writes, sealed, their sequence kept.
//
// PutFull is atomic: the checkpoint and its writes are imported in one unit
// (checkpointer.ThreadImporter), on every memvault backend.
//
// # Sessions
//
// Under a namespace prefix ("trpc" by default), then the app name:
//
//	<prefix> <app> sessions <user>     key: session id   tRPC's JSON of the session
//	<prefix> <app> app-state           key: "state"      app state
//	<prefix> <app> user-state <user>   key: "state"      user state
//
// A session (state, events, tracks, summaries) is one item, sealed and
// bound to its app, user and id; each change is a compare-and-set
// read-modify-write, so several processes can append to one session
// without losing events. GetSession honours WithEventNum and WithEventTime;
// event pages (WithGetSessionEventPage) are refused with tRPC's
// ErrEventPageUnsupported, since the session is read whole. Summaries need
// SessionOptions.Summarizer; each covers what the session holds of its
// filter key (tRPC's own services feed only the events since the previous
// summary). SessionTTL uses the store's TTL.
//
// # Memories
//
// Each memory is one item under <prefix> <app> memories <user>, keyed by
// a content-derived id as tRPC's — but an HMAC under a random key of the
// user's own (an item under <prefix> <app> user-state <user>, sealed under
// her data key with per-subject keys and erased with her), not tRPC's
// plain SHA-256, which a copy of the database confirmed guessed texts
// against; MigrateMemoryIDs moves memories stored under the plain ids of
// versions before. Its text is embedded by the store's embedder, so
// SearchMemories ranks by meaning (tRPC's in-memory service scores
// keywords). Kind, KindFallback, TimeAfter/TimeBefore, MaxResults,
// SimilarityThreshold and OrderByEventTime are honoured; hybrid search and
// deduplication are refused with an error rather than ignored. Automatic
// memory extraction (tRPC's auto memory mode) runs when
// MemoryOptions.Extractor is set — tRPC's extractor.NewExtractor(model),
// or any extractor.MemoryExtractor: EnqueueAutoMemoryJob, which tRPC's
// runner calls after each run, gives it the session's new messages and
// the user's closest memories and applies the operations it returns, in
// a background worker that Close waits for. Without an extractor it does
// nothing, as in a tRPC service without one; the memory tools (Tools)
// work either way.
//
// # Per-subject keys and erasure
//
// Everything of a user — sessions (state, events, tracks, summaries), her
// user state, her memories — lives under a namespace whose label after a
// prefix of SubjectNamespaces is the user id (escaped: Subject). With
// those prefixes as memvault's per-subject namespace prefixes (with the
// default prefix:
// MEMVAULT_SUBJECT_NAMESPACE=trpc.*.sessions,trpc.*.user-state,trpc.*.memories),
// each user's data is sealed under her own data keys, and `memvault
// forget` of Subject(user) destroys them and deletes all of it, in every
// app. App state is the app's, under the master key. Versions before this
// layout kept user state in one item per user under <prefix> <app>
// user-state, under the master key: it is still read and moved by its
// next write; run SessionService.MigrateUserState once, with every
// process upgraded, to move the rest, since erasure does not reach state
// left there.
//
// The CheckpointSaver knows lineages, not users: to make a graph's
// checkpoints a user's, give its runs lineage ids that start with the
// user's subject and a separator (lineage_id "carol:refund-1" with
// MEMVAULT_SUBJECT_THREAD_SEPARATOR=":").
package trpcagent
