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
