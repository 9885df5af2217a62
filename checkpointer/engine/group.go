package engine

import (
	"context"
	"slices"
	"sync"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// committer is group commit (Options.GroupCommit) as leaders and their
// followers: a write that finds fewer than flights commits in flight
// commits alone, at once, on the driver's own path, so a lone writer
// waits for nothing it did not wait for before. Writes arriving while
// flights commits are in flight queue; when one ends, its caller hands up
// to max of them, oldest first, to the first of them, who commits them as
// one group (checkpointer.GroupWriter) and hands on the next. The
// driver's commits, not the callers, set the pace, and every caller
// waits for its own write's commit and no other.
type committer struct {
	w       checkpointer.GroupWriter
	max     int
	flights int // commits in flight at most

	mu     sync.Mutex
	flying int        // commits in flight
	queue  []*groupOp // waiting, oldest first
}

// groupOp is one caller's write waiting in a committer.
type groupOp struct {
	ctx context.Context
	op  checkpointer.GroupOp
	// taken: a leader took the op (guarded by committer.mu); from then on
	// its caller waits for its outcome, even when its context ends, since
	// it may be committed.
	taken bool
	ready chan struct{} // closed once err is final, or lead is set
	err   error
	// lead, when not nil, is the group the op's caller is to commit (its
	// own op first).
	lead []*groupOp
}

// newCommitter returns a committer of groups of at most size writes on
// d, at most flights (at least 1) in flight, or nil when d cannot write
// groups or size < 2.
func newCommitter(d checkpointer.Driver, size, flights int) *committer {
	w, ok := d.(checkpointer.GroupWriter)
	if !ok || size < 2 {
		return nil
	}
	return &committer{w: w, max: size, flights: max(1, flights)}
}

// do stores op: alone by solo (the driver's Put or PutWrites, with the
// caller's ctx) when no commit is in flight, in a group otherwise. A
// caller whose ctx ends while its op waits gets ctx.Err() and the op is
// never written; once a leader has taken the op, the caller waits for
// its outcome.
func (c *committer) do(ctx context.Context, op checkpointer.GroupOp, solo func() error) error {
	c.mu.Lock()
	if c.flying < c.flights {
		c.flying++
		c.mu.Unlock()
		err := solo()
		c.handOn()
		return err
	}
	g := &groupOp{ctx: ctx, op: op, ready: make(chan struct{})}
	c.queue = append(c.queue, g)
	c.mu.Unlock()
	select {
	case <-g.ready:
	case <-ctx.Done():
		c.mu.Lock()
		if !g.taken {
			c.queue = slices.DeleteFunc(c.queue, func(q *groupOp) bool { return q == g })
			c.mu.Unlock()
			return ctx.Err()
		}
		c.mu.Unlock()
		<-g.ready
	}
	if g.lead != nil {
		c.commit(g.lead)
		c.handOn()
	}
	return g.err
}

// handOn ends the commit in flight: the oldest waiting writes, up to
// max, go to the first of them to commit, or, with none waiting, the
// next write commits alone.
func (c *committer) handOn() {
	c.mu.Lock()
	if len(c.queue) == 0 {
		c.flying--
		c.mu.Unlock()
		return
	}
	n := min(len(c.queue), c.max)
	group := slices.Clone(c.queue[:n])
	c.queue = slices.Delete(c.queue, 0, n)
	for _, g := range group {
		g.taken = true
	}
	c.mu.Unlock()
	group[0].lead = group
	close(group[0].ready)
}

// commit stores group, whose first op is the leader's own, and tells
// every other caller its outcome. An op whose caller's context has ended
// is not written: its caller, told nothing yet, gets the context's error.
// The group's transaction runs on the leader's context without its
// cancellation: one caller giving up must not fail the others' writes.
func (c *committer) commit(group []*groupOp) {
	live := make([]*groupOp, 0, len(group))
	ops := make([]checkpointer.GroupOp, 0, len(group))
	for _, g := range group {
		if err := g.ctx.Err(); err != nil {
			g.err = err
			continue
		}
		live, ops = append(live, g), append(ops, g.op)
	}
	if len(ops) > 0 {
		errs := c.w.WriteGroup(context.WithoutCancel(group[0].ctx), ops)
		for i, g := range live {
			g.err = errs[i]
		}
	}
	for _, g := range group[1:] {
		close(g.ready)
	}
}

// put stores p: through the committer when group commit is on.
func (s *Saver) put(ctx context.Context, p *checkpointer.PutRows) error {
	if s.group == nil {
		return core.Refused(p.Fence, s.d.Put(ctx, p))
	}
	return core.Refused(p.Fence, s.group.do(ctx, checkpointer.GroupOp{Put: p}, func() error { return s.d.Put(ctx, p) }))
}

// putWrites stores w: through the committer when group commit is on.
func (s *Saver) putWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	if s.group == nil {
		return core.Refused(w.Fence, s.d.PutWrites(ctx, w))
	}
	return core.Refused(w.Fence, s.group.do(ctx, checkpointer.GroupOp{Writes: w}, func() error { return s.d.PutWrites(ctx, w) }))
}

// GroupCommit returns how many writes one group commit stores at most;
// 0 when group commit is off (Options.GroupCommit below 2, or a driver
// that cannot write groups).
func (s *Saver) GroupCommit() int {
	if s.group == nil {
		return 0
	}
	return s.group.max
}
