// Package audit is memvault's tamper-evident audit trail: an append-only
// table of records — time, principal (from the context), operation,
// target (thread, namespace and key), subject and key id, never values —
// each chained to the one before by an HMAC-SHA256 under the audit key
// (derived from the master key, keys.Hierarchy.AuditKey), so that an
// edited, deleted, inserted or reordered record makes Verify fail. Saver
// and Store wrap a checkpointer and a store so that every read, write and
// delete is recorded; config.Handle records erasures, key rotations and
// re-encryptions too (MEMVAULT_AUDIT=on).
//
// What the chain cannot show: records cut off the end of the trail (keep
// the latest sequence number somewhere else, as `memvault audit verify`
// prints it, to compare), and operations of a process that bypasses
// memvault.
package audit
