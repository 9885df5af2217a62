// Package audit is memvault's tamper-evident audit trail: an append-only
// table of records — time, principal (from the context), operation,
// target (thread, namespace and key), subject and key id, never values.
// Saver and Store wrap a checkpointer and a store so that every read, write
// and delete is recorded; vault.Handle records erasures, key rotations and
// re-encryptions too (MEMVAULT_AUDIT=true).
//
// # The chain
//
// Records form a SHA-256 hash chain: each record's link hashes the previous
// link and the record's fields, and the first record's previous link is
// derived from the id of the data database (audit/sqliteaudit.DatabaseID,
// audit/pgaudit.DatabaseID; Options.DatabaseID), so the trail of another
// database fails Verify here even under the same master key. Each record
// carries an HMAC-SHA256 of its link under the audit key (derived from the
// master key, keys.DeriveAuditKey); as the link commits to every record
// before it, one MAC authenticates the whole prefix. An edited, deleted,
// inserted or reordered record makes Verify fail.
//
// # Group commit
//
// Each audited operation waits until its record is durable. A Trail writes
// the records of its callers that arrive while a commit runs together, in
// the next transaction (one commit, one fsync, at most 256 callers): the
// chain stays gap-free and in arrival order, every caller is answered once
// its batch committed, and a batch that fails fails its callers only. At
// one operation in flight nothing changes: the caller commits its record
// itself. Several processes (several Trails) still take turns on the
// table, each with its own batches. A read alone in flight whose saver
// can (checkpointer.ReadRecorder: PostgreSQL and SQLite, with
// Options.WritesInTx) sends its pending record with the read, in one
// transaction and one commit, and returns what it read once that
// committed (see Pending records).
//
// # Key changes
//
// Records are written in epochs, one per audit key. When the primary
// master key changed, the first record written under the new key is a key
// change record (OpKeyChange) MACed by the new key and by the old one,
// which must still be configured as a previous key (the writer checks the
// last record under it before vouching for the trail). Afterwards the trail
// verifies with the current key alone: records under a key no longer
// configured are authenticated by the key change's MAC over their links.
// A record after a key change must be under the new key, so whoever keeps
// a retired key can authenticate what was written before its retirement,
// and forge nothing after it. A trail that ends under a previous key
// (nothing recorded under the primary since it changed, or the trail cut
// back to before the change) does not verify; an audited operation or
// Anchor records the key change.
//
// # Anchors
//
// The chain alone cannot tell records cut off its end from a trail that
// ended there, nor a trail rolled back to an earlier state and continued.
// Anchor appends a record and returns the head (sequence number, link,
// database id, time, MAC) to keep outside the database; Check and
// VerifyAnchors then fail when the trail is shorter than an anchor or
// differs from it at the anchor's record. What was appended after the
// latest anchor can still be cut undetected.
//
// # Format 1
//
// Trails written before the hash chain (records with a bare MAC chained to
// the previous MAC) still verify: each record under any configured key, the
// last one under the current key (else the trail ends under a previous
// key, as above). The first writer of this version walks them once, checks
// each MAC, and chains its record to them, binding the trail to the
// database from there; records an older memvault appends afterwards must be
// under the current epoch's key.
//
// Format 1 binds nothing to a database, so a trail of format-1 records only
// could be another database's older trail, or this one cut back to before
// its upgrade. Once a writer has appended a hash-chained record it marks,
// in the data database (Options.Meta: a row of its memvault_meta, where the
// database id lives, which whoever can write only the trail cannot
// remove), that the chain began; from then on a trail without a
// hash-chained record, or an empty one, fails Verify and no writer extends
// it. The mark follows the record's commit (a crash in between leaves the
// next writer to make it); a trail written by this version before the mark
// existed verifies and is marked by its next writer.
//
// # Pending records
//
// When the data lives in the trail's database (Options.WritesInTx), a
// write's record is first a pending row (PendingTable), committed with the
// write and MACed (bound to the database and a random row id); a chainer
// links pending rows into the chain shortly after, deleting them in the
// same transaction, and Check checks those not chained yet.
//
// A read's record is committed before the read returns. Alone in
// flight, on a saver that inserts it in the read's own transaction
// (checkpointer.WithReadRecord), it is inserted in that transaction (a
// listing then holds its page, at most checkpointer.MaxRecordedScan
// checkpoints, until the commit, and yields nothing before it) — on a
// table that takes it (ChainRowTable: PostgreSQL's), chained there and
// then when the process knows the trail's last record (it appended it: a
// chaining run, a group commit, an earlier such read), as one row linked
// after that record under the current key, with no pending id; else as a
// pending row. A chained row whose place was
// taken — another process, or this one's chainer, appended since — is
// refused by the table (the primary key holds each row's last sequence
// number, a unique index each row's first, so two rows linked after the
// same record cannot both be stored; on PostgreSQL the row also takes the
// appenders' lock only when it is free, and is refused when it is not;
// it is refused too when the record it was linked after is no longer
// stored with that link — the trail cut back or wiped behind the
// process, where it would follow a gap or a record that is not there),
// the read's transaction stores nothing, and the read runs again with a
// pending row. With several reads in flight, their records are pending
// rows stored by the readers' shared INSERT.
//
// The records of concurrent reads that commit together are one pending
// row (Pending.More, under one MAC), chained as one row of the trail
// (storage format 3: the row holds its last record in its columns and
// the others in its more column). Each record keeps its own sequence
// number, link and MAC, and commits to its own pending id (the row's id,
// then id.1, id.2, …: MemberID), so the chain is the same record by
// record: Verify, Records and export read records as before, and trails
// written before verify as they did. A row that cannot be split, edited
// or shortened without failing Verify or its MAC: one record edited
// breaks its link, one removed breaks the sequence.
//
// What someone with write access to the trail's database can do with
// pending rows, and what shows it:
//
//   - Replay: copy a pending row and insert it again once it was chained.
//     It holds its MAC, but each chained record commits to its pending id
//     (Record.PendingID, covered by its link), the tables keep a unique
//     index on the chained records' pending ids, and a table reads, with
//     each pending row, the chained record that holds its id
//     (Pending.Chained). The chainer refuses such a row, as it refuses a
//     forged one: the run fails with ErrTampered, and records are not made
//     until it succeeds (fail closed: someone removes the row once looked
//     into); Check reports it as ErrTampered. A row is never chained twice:
//     the id's check and the chain's insert are in the one transaction that
//     deletes the pending rows it chains, under the trail's lock.
//   - Withholding: delete a pending row before it is chained and insert it
//     later. It is chained then, after records made later than it. That is
//     not proof of tampering: a write's record is timed when the write
//     begins and committed with it, so a slow transaction (or a write kept
//     queued by checkpointer/durable's Exit mode, or a process whose clock
//     is behind the others') commits a record older than records already
//     chained. Check counts the records chained more than LateAfter after
//     a record made later than them (Report.Late) and names the first: a
//     row withheld longer than that shows; one withheld for less, or while
//     no other record was chained, does not.
//   - Deletion: a pending row deleted before it is chained leaves no trace,
//     as records cut off the chain's end leave none without an anchor: an
//     anchor taken after a record was chained covers it.
//
// Records chained before memvault kept pending ids carry none: a copy of
// one of those rows, inserted again, is chained again.
//
// What the trail cannot show: operations of a process that bypasses
// memvault, and anything rewritten by whoever holds the current master key
// and can write the table (anchors kept elsewhere detect that too).
package audit
