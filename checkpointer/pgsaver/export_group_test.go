package pgsaver

import (
	"context"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
)

// EveryWriteGrouped returns a saver on s's database whose every Put and
// PutWrites goes through the driver's WriteGroup, a group of one: the
// conformance suite then checks WriteGroup's rules write by write.
func EveryWriteGrouped(s *Saver) (*engine.Saver, error) {
	return engine.New(groupOfOne{s.driver()}, engine.Options{Serde: s.serde})
}

// groupOfOne is the driver with Put and PutWrites run by WriteGroup.
type groupOfOne struct{ *driver }

func (g groupOfOne) Put(ctx context.Context, p *checkpointer.PutRows) error {
	return g.WriteGroup(ctx, []checkpointer.GroupOp{{Put: p}})[0]
}

func (g groupOfOne) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	return g.WriteGroup(ctx, []checkpointer.GroupOp{{Writes: w}})[0]
}

// driver is the saver's own driver, on its pool.
func (s *Saver) driver() *driver {
	return &driver{db: s.db, q: &s.q, own: !s.inTx, topo: s.topo}
}
