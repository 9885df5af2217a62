package pgstore

import (
	"context"

	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store/internal/items"
)

// Reencrypt implements store.Reencrypter: every item value not sealed under
// the serializer's primary key (or still plain JSONB, when the serializer
// allows reading plaintext) becomes an envelope sealed under it, bound to
// the item's namespace and key. Rows are read in key order a batch at a
// time and written back with compare-and-swap updates in one transaction
// per batch, so concurrent writes win and an interrupted run can be started
// again. Vectors, timestamps and TTLs are untouched.
func (s *Store) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	// value::text of JSONB is canonical, so comparing it with what was read
	// is an exact compare-and-swap.
	return s.b.ReencryptSQL(ctx, pgdb.Exec{DB: s.d.db}, s.opts.Serde, opt, s.d.t.store,
		items.ValueSQL{Read: "value::text", Set: "?::jsonb", Match: "value::text = ?"})
}
