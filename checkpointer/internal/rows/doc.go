// Package rows is the checkpointer's write core: it turns a Put or a
// PutWrites into the rows every driver stores — validated, the checkpoint
// document and metadata encoded, each value serialized and sealed where it
// lives (internal/binding), write indexes assigned (LangGraph's
// WRITES_IDX_MAP) and the upsert rule applied, in the order that keeps
// concurrent writers from deadlocking. Drivers only store what it returns.
package rows
