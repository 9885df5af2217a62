package reencrypt

import "errors"

// Options tunes a re-encryption run.
type Options struct {
	// BatchSize is how many rows are rewritten per transaction; 0 means 500.
	BatchSize int
	// DryRun counts the rows that would be rewritten without writing.
	DryRun bool
	// Progress, when set, is called after each batch with the rows scanned
	// so far and the total to scan.
	Progress func(scanned, total int64)
	// DeferCompaction leaves the database file as the run leaves it. A run
	// that is not a dry run on SQLite ends by compacting the file (VACUUM,
	// then emptying the write-ahead log), because pages keep images of
	// rewritten rows — still readable with the old key — that only a
	// rebuild removes. A caller that rewrites more of the same file
	// afterwards sets it and compacts once at the end, as
	// vault.Handle.Reencrypt does; set alone, it leaves those images.
	DeferCompaction bool
}

// ErrNotEncrypted is wrapped by Reencrypt when the saver's or store's
// serializer does not encrypt (encryption is off): there is nothing to
// re-encrypt under.
var ErrNotEncrypted = errors.New("reencrypt: the serializer does not encrypt")

// ErrCompactPending is wrapped by Reencrypt when every row was resealed
// but the database file could not be compacted (on SQLite: most often a
// reader in another process held the write-ahead log): images of the rows
// under the old key remain in the file until it is. Run Reencrypt again
// once that process is done — it rewrites nothing and compacts — and only
// then retire the old key.
var ErrCompactPending = errors.New("reencrypt: every row is resealed, but the file still holds images of them under the old key until it is compacted")

// Stats reports a re-encryption run.
type Stats struct {
	// Scanned is the number of value rows read.
	Scanned int64
	// Rewritten is the number of rows rewritten (or, in a dry run, that
	// would be).
	Rewritten int64
}
