package pgsaver

import (
	"context"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
)

// listQuery is the statement the engine's List has this saver's driver run
// for cfg and opt (the engine maps them to a DriverQuery this way).
func (s *Saver) listQuery(cfg *checkpointer.Config, opt checkpointer.ListOptions) (string, []any, error) {
	return (&driver{q: &s.q}).buildList(engine.ListQuery(cfg, opt))
}

// rowDriver serves one stored row to the engine's GetTuple.
type rowDriver struct {
	checkpointer.Driver
	st *checkpointer.StoredCheckpoint
}

func (rowDriver) Name() string { return "postgres" }
func (rowDriver) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{}
}
func (d rowDriver) Load(context.Context, string, string, string) (*checkpointer.StoredCheckpoint, error) {
	return d.st, nil
}

// decode rebuilds a tuple from a row as GetTuple does: the driver's split
// of the row's arrays, then the engine's decoding and opening.
func (s *Saver) decode(ctx context.Context, r *rawTuple) (*checkpointer.Tuple, error) {
	st, err := r.stored()
	if err != nil {
		return nil, err
	}
	e, err := engine.New(rowDriver{st: st}, engine.Options{Serde: s.serde})
	if err != nil {
		return nil, err
	}
	return e.GetTuple(ctx, checkpointer.Config{ThreadID: st.Thread, CheckpointNS: st.NS, CheckpointID: st.ID})
}
