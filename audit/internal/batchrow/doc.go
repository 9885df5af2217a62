// Package batchrow is how the trail's tables store a batch of records in
// one row (trail storage format 3): the records chained from one pending
// row of several (audit.Pending.More, a batch of concurrent reads'
// records), and that pending row itself.
//
// A chained row holds its batch's last record in the table's columns (so
// that the last row's seq, link and MAC are the trail's head, as before),
// its first record's pending id in pending_id (the unique index then
// guards the whole batch against a replayed pending row), and the records
// before the last in the more column, as JSON. Every record keeps its own
// link and MAC: the chain is the same record by record, only its storage
// is shared, so Verify, Records and export read the records as they
// always did (the tables expand the rows in Page).
package batchrow
