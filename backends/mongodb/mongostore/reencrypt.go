package mongostore

import (
	"context"

	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// Reencrypt implements store.Reencrypter through the store engine
// (engine.Reencrypt): every item value not sealed under the serializer's
// primary key (or still plaintext, when the serializer reads plaintext) is
// sealed again into memvault_value, bound to its namespace and key, a
// batch per write transaction in (namespace, key) order. An item is
// rewritten only when it still holds the bytes read, under the store's
// writer lease (every process's writers hold it) and by a replace
// conditional on the version read, so a put meanwhile wins; vectors,
// timestamps and TTLs are untouched. MongoDB keeps no row images a compaction would have to
// remove.
func (s *Store) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return engine.Reencrypt(ctx, s.Engine, opt)
}

var _ store.Reencrypter = (*Store)(nil)
