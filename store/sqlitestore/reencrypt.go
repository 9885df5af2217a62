package sqlitestore

import (
	"context"

	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store/internal/items"
)

// Reencrypt implements store.Reencrypter: every item value not sealed
// under the serializer's primary key (or still plaintext, when the
// serializer allows reading plaintext) is sealed again, bound to its
// namespace and key, a batch per write transaction. Vectors are untouched:
// they never change with the key. Safe to run again after an interruption.
//
// Unless opt.DeferCompaction, a run that is not a dry run ends by
// compacting the database file (VACUUM, then emptying the write-ahead
// log): SQLite leaves images of rewritten rows in its pages, which the old
// key still opens. If a reader of another process keeps the log from
// being emptied, the error wraps reencrypt.ErrCompactPending: run
// Reencrypt again once it is done.
func (s *Store) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	db := sqlexec.SQLite{Read: s.db.Reader(), Write: s.db.Write, CompactFile: s.db.Compact}
	return items.EngineBase(s.Engine).ReencryptSQL(ctx, db, s.serde, opt, "store", items.ValueSQL{Read: "value", Set: "?", Match: "CAST(value AS BLOB) = ?"})
}
