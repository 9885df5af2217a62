package engine

import (
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// Document is a checkpoint document as the engine parsed it, for a driver
// that must know its format and channel versions to fetch its rows (a SQL
// driver reading the value rows of the versions a document names). Pass it
// on in checkpointer.StoredCheckpoint.Decoded; do not modify it.
type Document struct {
	dec *core.DecodedCheckpoint
}

// DecodeDocument parses a stored checkpoint document written by memvault,
// Python or JS LangGraph. Numeric versions become their decimal text.
func DecodeDocument(doc []byte) (*Document, error) {
	dec, err := core.DecodeCheckpointJSON(doc)
	if err != nil {
		return nil, err
	}
	return &Document{dec: dec}, nil
}

// V is the document's format version; a checkpoint before 4 reads its
// pending sends from its parent's writes.
func (d *Document) V() int { return d.dec.Checkpoint.V }

// ChannelVersions are the document's channel versions, by channel.
func (d *Document) ChannelVersions() map[string]string { return d.dec.Checkpoint.ChannelVersions }

// DocumentOf is the document of cp, for a driver that keeps checkpoints
// decoded: cp must be the driver's own copy, without channel values, which
// the engine fills and hands to its caller.
func DocumentOf(cp *checkpointer.Checkpoint) *Document {
	return &Document{dec: &core.DecodedCheckpoint{Checkpoint: cp}}
}
