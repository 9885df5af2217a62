package core

import (
	"context"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
)

// WriteFence is the checkpointer.WriteFence of rows sealed by c: the
// engine hands it to drivers with every write.
func WriteFence(c binding.Codec, f *binding.Fence) checkpointer.WriteFence {
	return &fence{c, f}
}

type fence struct {
	c binding.Codec
	f *binding.Fence
}

// Refused forgets the cached keys of wf's subjects when err refused its
// write as an erasure's (binding.Codec.Refused); wf is a WriteFence of
// this package or nil. It returns err.
func Refused(wf checkpointer.WriteFence, err error) error {
	if f, ok := wf.(*fence); ok && err != nil {
		f.c.Refused(err, f.f)
	}
	return err
}

func (f *fence) Check(ctx context.Context) error { return f.c.Check(ctx, f.f) }

func (f *fence) Statements() ([]checkpointer.FenceStatement, bool) {
	stmts, ok := f.c.Statements(f.f)
	if len(stmts) == 0 {
		return nil, ok
	}
	out := make([]checkpointer.FenceStatement, len(stmts))
	for i, s := range stmts {
		out[i] = checkpointer.FenceStatement{SQL: s.SQL, Args: s.Args}
	}
	return out, ok
}
