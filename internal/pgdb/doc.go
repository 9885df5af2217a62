// Package pgdb is what memvault's PostgreSQL packages share over pgx, so
// that each spells its statements and nothing else:
//
//   - Querier and DB, the one interface over a pool, a connection and a
//     transaction that every PostgreSQL package takes (pgx's own advice:
//     defined once);
//   - Exec, sqlexec.DB over pgx: the contract cores and internal/rotate
//     run shared statements through sqlexec.DB without importing pgx;
//   - Tx and RunTx, a transaction whose BEGIN and COMMIT travel with its
//     batches (two round trips where pgx.BeginFunc costs four), a
//     savepoint inside a caller's transaction;
//   - Group, independent writes in one batch (group commit), each op's
//     error its own; Seq, rows streamed as they arrive; SplitRows, Probe,
//     Ident and Rebind, the small pieces around them.
//
// It holds no table, no schema and no rule of either contract: which
// statements run, and why, stays with the backend that runs them
// (checkpointer/pgsaver, store/pgstore).
package pgdb
