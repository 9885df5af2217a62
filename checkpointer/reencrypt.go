package checkpointer

import "context"

// Reencrypter is implemented by savers that can rewrite their stored values
// (channel blobs and pending writes) under the serializer's primary key:
// the last step of a key rotation. Rows already under the primary key are
// left alone, so an interrupted run can simply be started again.
type Reencrypter interface {
	Reencrypt(ctx context.Context, opt ReencryptOptions) (ReencryptStats, error)
}

// ReencryptOptions tunes a re-encryption run.
type ReencryptOptions struct {
	// BatchSize is how many rows are rewritten per transaction; 0 means 500.
	BatchSize int
	// DryRun counts the rows that would be rewritten without writing.
	DryRun bool
	// Progress, when set, is called after each batch with the rows scanned
	// so far and the total to scan.
	Progress func(scanned, total int64)
}

// ReencryptStats reports a re-encryption run.
type ReencryptStats struct {
	// Scanned is the number of value rows read.
	Scanned int64
	// Rewritten is the number of rows rewritten (or, in a dry run, that
	// would be).
	Rewritten int64
}
