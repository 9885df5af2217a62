package audit

import (
	"context"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// Store is a store whose every read, search, write and delete is recorded
// in a trail before the result is returned; a record that cannot be
// written fails the operation. It implements the optional store interfaces
// by delegating (an error when the wrapped store lacks one).
type Store struct {
	inner    store.Store
	trail    *Trail
	subjects Subjects
}

var (
	_ store.Store             = (*Store)(nil)
	_ store.Lister            = (*Store)(nil)
	_ store.PrefixDeleter     = (*Store)(nil)
	_ store.ConditionalPutter = (*Store)(nil)
	_ store.Reencrypter       = (*Store)(nil)
	_ store.Sweeper           = (*Store)(nil)
	_ store.Reembedder        = (*Store)(nil)
)

// NewStore returns inner audited in trail.
func NewStore(inner store.Store, trail *Trail, subjects Subjects) *Store {
	return &Store{inner: inner, trail: trail, subjects: subjects}
}

// Unwrap returns the store Store audits.
func (s *Store) Unwrap() store.Store { return s.inner }

func (s *Store) log(ctx context.Context, op string, ns store.Namespace, key string) error {
	return s.trail.LogAll(ctx, []Entry{s.entry(op, ns, key)})
}

// entry is the record of op on ns/key, its subject and key resolved.
func (s *Store) entry(op string, ns store.Namespace, key string) Entry {
	text := ns.String()
	e := Entry{Op: op, Target: text}
	if key != "" {
		e.Target += "/" + key
	}
	if s.subjects != nil {
		e.Subject = s.subjects.NamespaceSubject(text)
		e.KeyID = s.subjects.CurrentKeyID(e.Subject)
	}
	return e
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if err := s.log(ctx, OpItemRead, ns, key); err != nil {
		return nil, err
	}
	return s.inner.Get(ctx, ns, key, opts...)
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if err := s.log(ctx, OpItemWrite, ns, key); err != nil {
		return err
	}
	return s.inner.Put(ctx, ns, key, value, opts...)
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, ns store.Namespace, key string) error {
	if err := s.log(ctx, OpItemDelete, ns, key); err != nil {
		return err
	}
	return s.inner.Delete(ctx, ns, key)
}

// Search implements store.Store (one record for the prefix searched).
func (s *Store) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	if err := s.log(ctx, OpItemSearch, prefix, ""); err != nil {
		return nil, err
	}
	return s.inner.Search(ctx, prefix, opt)
}

// ListNamespaces implements store.Store; it decrypts nothing and is not
// recorded.
func (s *Store) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	return s.inner.ListNamespaces(ctx, opt)
}

// Batch implements store.Store: a record per operation, all appended at
// once, then the batch.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	es := make([]Entry, 0, len(ops))
	for _, op := range ops {
		switch o := op.(type) {
		case store.GetOp:
			es = append(es, s.entry(OpItemRead, o.Namespace, o.Key))
		case store.PutOp:
			if o.Value == nil {
				es = append(es, s.entry(OpItemDelete, o.Namespace, o.Key))
			} else {
				es = append(es, s.entry(OpItemWrite, o.Namespace, o.Key))
			}
		case store.SearchOp:
			es = append(es, s.entry(OpItemSearch, o.Prefix, ""))
		}
	}
	if err := s.trail.LogAll(ctx, es); err != nil {
		return nil, err
	}
	return s.inner.Batch(ctx, ops)
}

// ListItems implements store.Lister (a read of the namespace).
func (s *Store) ListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) ([]store.Item, error) {
	l, ok := s.inner.(store.Lister)
	if !ok {
		return nil, unsupported(s.inner, "list items")
	}
	if err := s.log(ctx, OpItemRead, ns, ""); err != nil {
		return nil, err
	}
	return l.ListItems(ctx, ns, opt)
}

// DeletePrefix implements store.PrefixDeleter.
func (s *Store) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	d, ok := s.inner.(store.PrefixDeleter)
	if !ok {
		return 0, unsupported(s.inner, "delete by prefix")
	}
	if err := s.log(ctx, OpItemDelete, prefix, ""); err != nil {
		return 0, err
	}
	return d.DeletePrefix(ctx, prefix)
}

// PutIf implements store.ConditionalPutter.
func (s *Store) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	c, ok := s.inner.(store.ConditionalPutter)
	if !ok {
		return unsupported(s.inner, "put conditionally")
	}
	if err := s.log(ctx, OpItemWrite, ns, key); err != nil {
		return err
	}
	return c.PutIf(ctx, ns, key, value, cond, opts...)
}

// Reencrypt implements store.Reencrypter.
func (s *Store) Reencrypt(ctx context.Context, opt checkpointer.ReencryptOptions) (checkpointer.ReencryptStats, error) {
	r, ok := s.inner.(store.Reencrypter)
	if !ok {
		return checkpointer.ReencryptStats{}, unsupported(s.inner, "re-encrypt")
	}
	if err := s.trail.Log(ctx, OpReencrypt, "store", "", ""); err != nil {
		return checkpointer.ReencryptStats{}, err
	}
	return r.Reencrypt(ctx, opt)
}

// Sweep implements store.Sweeper (expired items are deleted unaudited:
// the store's own TTL decides).
func (s *Store) Sweep(ctx context.Context) (int, error) {
	sw, ok := s.inner.(store.Sweeper)
	if !ok {
		return 0, unsupported(s.inner, "sweep")
	}
	return sw.Sweep(ctx)
}

// Reembed implements store.Reembedder (recorded as a re-encryption of the
// vectors).
func (s *Store) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	r, ok := s.inner.(store.Reembedder)
	if !ok {
		return 0, unsupported(s.inner, "re-embed")
	}
	if err := s.trail.Log(ctx, OpReencrypt, "store vectors", "", ""); err != nil {
		return 0, err
	}
	return r.Reembed(ctx, to, opt)
}

// Close closes the wrapped store when it can be closed.
func (s *Store) Close() error {
	if c, ok := s.inner.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
