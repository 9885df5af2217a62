// Package trpcagent makes memvault the checkpoint saver of tRPC-Agent-Go's
// graphs (trpc.group/trpc-go/trpc-agent-go/graph): CheckpointSaver is a
// graph.CheckpointSaver on any memvault checkpointer — SQLite by default,
// PostgreSQL in production, encrypted when the saver's serializer is.
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
// extra) is memvault's plaintext, filterable metadata. Pending writes are
// memvault pending writes, sealed, their sequence kept.
//
// PutFull is atomic: the checkpoint and its writes are imported in one unit
// (checkpointer.ThreadImporter), on every memvault backend.
package trpcagent
