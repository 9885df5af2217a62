// Package audittest is the conformance suite of audit tables
// (audit.Table): every table — audit.MemoryTable, audit/sqliteaudit,
// audit/pgaudit, and any other — runs RunTable, which checks what the
// trail needs of its table (records stored exactly as given, in order, one
// appender at a time) and that every kind of tampering with the stored
// records, done through the table's own storage, makes the trail fail to
// verify with audit.ErrTampered.
//
// Tampering is no part of any table's API: the suite tampers through
// Backend.Put, which each table's test writes against its storage (SQL on
// the table for SQL tables), as whoever can write the table could.
//
// Besides RunTable it holds the suites every trail backend runs for
// records written in the data's own transactions (RunWritesInTx,
// RunStoreWritesInTx), pending records (RunPending), audited reads
// (RunReads), marks (RunMarksBetween), and the kill -9 harnesses
// (KillWriter, KillCheckpointWriter, KillCheckpointReader) whose child
// processes run WriteUntilKilled and its kin.
package audittest
