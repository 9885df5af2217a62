// Package pgfence runs a write's fences on PostgreSQL, for the
// checkpointer's and the store's drivers alike: the fences reach a driver
// through its contract's seam (checkpointer.WriteFence, store.WriteFence,
// both of shape Fence), and the driver runs their statements first in the
// write's batch or transaction (the key table in the same database holds
// the sealing key's row until the write commits), or, with the key table
// in another database, a check of the keys inside the write's transaction.
// Drain is what an erasure runs after destroying keys so that every write
// that found them live has committed or failed.
package pgfence
