// Package idlimit holds the one length limit of every stored identifier,
// shared by the checkpointer (thread ids, namespaces, checkpoint ids, task
// ids and paths, channel and node names, channel versions) and the store
// (namespaces, keys, index field paths), so that both packages document
// and enforce the same number.
//
// Why 512 bytes: an identifier must fit wherever a backend puts it.
// PostgreSQL refuses a btree index entry over about 2700 bytes (a third of
// a page) with SQLSTATE 54000, and its widest indexes hold four
// identifiers (checkpoint_writes: thread_id, checkpoint_ns, checkpoint_id,
// task_id; checkpoint_blobs: thread_id, checkpoint_ns, channel, version):
// 4 × 512 bytes plus headers is about 2070 bytes, which fits even when
// the text does not compress. The store's widest index is (prefix, key,
// field_name), three of them. Backends that may come — MongoDB index keys,
// Redis keys, Cosmos DB ids (at most 1023 bytes) — hold one 512-byte
// identifier with room to spare. LangGraph's own identifiers (UUIDs,
// "node:uuid|node:uuid" namespaces, channel names) are far shorter.
package idlimit
