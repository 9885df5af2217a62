// Package checks validates the arguments of every checkpointer operation
// once, for every driver: configs and thread ids, list options, the
// checkpoint and versions of a Put, the writes of a PutWrites, run ids and
// single-checkpoint deletes. Errors wrap the checkpointer's sentinels and
// never quote stored values.
package checks
