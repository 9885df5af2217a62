// Package core is the checkpointer's core, shared by every driver: it turns
// a Put or a PutWrites into the rows a driver stores — validated
// (internal/checks), the checkpoint document and metadata encoded, each
// value serialized and sealed where it lives (internal/binding), write
// indexes assigned (LangGraph's WRITES_IDX_MAP) and the upsert rule
// applied, in the order that keeps concurrent writers from deadlocking —
// and holds what reads share: decoding the checkpoint document, metadata
// containment filters, channel versions and the migration of pending sends
// from v<4 checkpoints. Drivers only store and fetch rows.
package core
