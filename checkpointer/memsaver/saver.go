package memsaver

import (
	"context"

	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/serde"
)

// Options configures an InMemorySaver: the engine's (engine.Options),
// whose zero value is ready to use. New refuses an unknown VersionStyle
// (checkpointer.ErrInvalidVersionStyle) and a Retention policy with a
// negative field (checkpointer.ErrInvalidPolicy), as the SQL savers do.
type Options = engine.Options

// InMemorySaver is a checkpointer.Saver that keeps serialized checkpoints,
// values and writes in memory. It is safe for concurrent use. Create it with
// New.
//
// Every method but Reencrypt and DrainWrites is checkpointer/engine's,
// running on this package's driver: each write holds the saver's write
// lock.
type InMemorySaver struct {
	*engine.Saver
	st *storage
}

// InMemorySaver implements every saver interface.
var _ core.Complete = (*InMemorySaver)(nil)

// New returns an empty InMemorySaver. Options every saver shares are
// checked as every saver's constructor checks them: an unknown
// VersionStyle (checkpointer.ErrInvalidVersionStyle) or a Retention policy
// with a negative field (checkpointer.ErrInvalidPolicy) is refused.
func New(opt Options) (*InMemorySaver, error) {
	st := newStorage()
	e, err := engine.New(st, opt)
	if err != nil {
		return nil, err
	}
	return &InMemorySaver{Saver: e, st: st}, nil
}

// WithSerde returns a saver over the same stored data that encodes and
// decodes with ser (nil means serde.JSONPlus{}), as a restarted process
// configured with another serializer would: after a key rotation, a saver
// whose keyring has the new primary key reads the old values and
// Reencrypt rewrites them. Both savers stay usable and share one lock.
func (s *InMemorySaver) WithSerde(ser serde.Serializer) *InMemorySaver {
	e := s.Saver.WithSerde(ser)
	return &InMemorySaver{Saver: e, st: s.st}
}

// DrainWrites returns once every write that began before it has finished:
// an erasure calls it after destroying a subject's keys, so that the rows it
// then deletes include every write that found those keys live.
func (s *InMemorySaver) DrainWrites(context.Context) error {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return nil
}
