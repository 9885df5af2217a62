package audit

//go:generate go run gencaps.go

import (
	"context"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
)

// The optional interfaces of an audited saver or store. A struct embedding
// *Saver (or *Store) and one adapter per interface inner implements has
// exactly inner's optional interfaces: Go cannot add methods to a value at
// run time, so caps_gen.go declares such a struct for every combination
// (gencaps.go writes it) and wrapSaver and wrapStore pick the one of inner.
// Each adapter has the one method of its interface, calling the *Saver's
// or *Store's audited implementation.

type (
	savThreadLister      struct{ s *Saver }
	savPruner            struct{ s *Saver }
	savCopier            struct{ s *Saver }
	savCheckpointDeleter struct{ s *Saver }
	savRunDeleter        struct{ s *Saver }
	savReencrypter       struct{ s *Saver }
	savThreadImporter    struct{ s *Saver }
	savSweeper           struct{ s *Saver }
)

func (a savThreadLister) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return a.s.listThreads(ctx)
}

func (a savPruner) Prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	return a.s.prune(ctx, threadIDs, strategy)
}

func (a savCopier) CopyThread(ctx context.Context, src, dst string) error {
	return a.s.copyThread(ctx, src, dst)
}

func (a savCheckpointDeleter) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return a.s.deleteCheckpoint(ctx, cfg)
}

func (a savRunDeleter) DeleteForRuns(ctx context.Context, runIDs []string) error {
	return a.s.deleteForRuns(ctx, runIDs)
}

func (a savReencrypter) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return a.s.reencrypt(ctx, opt)
}

func (a savThreadImporter) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	return a.s.importThread(ctx, items)
}

func (a savSweeper) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	return a.s.sweep(ctx, policy, opt)
}

type (
	stoLister            struct{ s *Store }
	stoPrefixDeleter     struct{ s *Store }
	stoConditionalPutter struct{ s *Store }
	stoReencrypter       struct{ s *Store }
	stoSweeper           struct{ s *Store }
	stoReembedder        struct{ s *Store }
)

func (a stoLister) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	return a.s.listItems(ctx, ns, opt)
}

func (a stoPrefixDeleter) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	return a.s.deletePrefix(ctx, prefix)
}

func (a stoConditionalPutter) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	return a.s.putIf(ctx, ns, key, value, cond, opts...)
}

func (a stoReencrypter) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return a.s.reencrypt(ctx, opt)
}

func (a stoSweeper) Sweep(ctx context.Context) (int, error) { return a.s.sweep(ctx) }

func (a stoReembedder) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	return a.s.reembed(ctx, to, opt)
}

// Each adapter implements its interface.
var (
	_ checkpointer.ThreadLister      = savThreadLister{}
	_ checkpointer.Pruner            = savPruner{}
	_ checkpointer.Copier            = savCopier{}
	_ checkpointer.CheckpointDeleter = savCheckpointDeleter{}
	_ checkpointer.RunDeleter        = savRunDeleter{}
	_ checkpointer.Reencrypter       = savReencrypter{}
	_ checkpointer.ThreadImporter    = savThreadImporter{}
	_ checkpointer.Sweeper           = savSweeper{}
	_ store.Lister                   = stoLister{}
	_ store.PrefixDeleter            = stoPrefixDeleter{}
	_ store.ConditionalPutter        = stoConditionalPutter{}
	_ store.Reencrypter              = stoReencrypter{}
	_ store.Sweeper                  = stoSweeper{}
	_ store.Reembedder               = stoReembedder{}
)
