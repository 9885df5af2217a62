package checkpointer

import "context"

// ImportCheckpoint is one checkpoint of a thread being imported, with the
// pending writes that belong to it.
type ImportCheckpoint struct {
	// ThreadID, CheckpointNS and ID name the checkpoint; ParentID is its
	// parent ("" for a root).
	ThreadID, CheckpointNS, ID, ParentID string
	// Checkpoint is nil when the checkpoint is already in the target: only
	// its writes are written (completing an import that stopped between a
	// checkpoint and its writes).
	Checkpoint *Checkpoint
	// Metadata and NewVersions are as for Saver.Put.
	Metadata    Metadata
	NewVersions map[string]string
	// Writes are written with PutWrites' rules, one entry per call, so
	// re-writing a write that is already there changes nothing.
	Writes []ImportWrites
}

// ImportWrites is one PutWrites call of an import.
type ImportWrites struct {
	TaskID string
	Writes []Write
}

// ThreadImporter is implemented by savers that can write a whole thread
// (its checkpoints and their pending writes) as one unit: when
// ImportThread returns an error nothing of items was written, so a failed
// import never leaves a thread half present. Integer channel versions are
// stored as integers whatever the saver's VersionStyle, so a thread written
// by JS LangGraph (which needs integers) can be continued by it after a
// move between databases; other versions are stored as they are.
type ThreadImporter interface {
	ImportThread(ctx context.Context, items []ImportCheckpoint) error
}
