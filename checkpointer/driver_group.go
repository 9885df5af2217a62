package checkpointer

import "context"

// GroupWriter is an optional Driver capability: storing the puts and
// pending writes of several concurrent callers — any threads — in one
// transaction, one commit, each isolated from the others. checkpointer/
// engine uses it for group commit (engine.Options.GroupCommit): while one
// write commits, the writes arriving meanwhile queue and are committed
// together by the next, so that concurrent callers share a commit (one
// fsync) instead of paying one each.
//
// The interface is UNSTABLE, as Driver is.
type GroupWriter interface {
	// WriteGroup stores each of ops as Driver.Put or Driver.PutWrites
	// would store it alone — rules, fence and audit record included — in
	// few transactions (one, unless one fails, or one per kind of
	// statement it sends: pgsaver stores its plain ops as rows in one and
	// the others in another), and returns
	// each op's outcome at its index: nil when the op is stored and
	// committed. An op that fails (its parent missing, a constraint, its
	// fence refusing, its record refused) stores nothing of its own and
	// does not fail the others; a failure of the transaction itself (its
	// commit, the connection) is every op's error, and then none of them
	// may be reported stored when it is not. ctx is not any one caller's:
	// the engine drops the ops whose callers' contexts ended before it
	// calls WriteGroup.
	WriteGroup(ctx context.Context, ops []GroupOp) []error
}

// GroupOp is one write of a group (GroupWriter): exactly one of Put and
// Writes is set.
type GroupOp struct {
	Put    *PutRows
	Writes *WriteRows
}

// Record is the op's audit record (of Put or of Writes), nil for none.
func (op GroupOp) Record() *RecordRow {
	if op.Put != nil {
		return op.Put.Record
	}
	return op.Writes.Record
}

// Fence is the op's WriteFence (of Put or of Writes).
func (op GroupOp) Fence() WriteFence {
	if op.Put != nil {
		return op.Put.Fence
	}
	return op.Writes.Fence
}
