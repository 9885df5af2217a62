package bench

import (
	"context"
	"errors"

	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/serde"
)

// addGrouped adds the grouped column to env: a saver on env's database
// with the encrypted saver's serializer and group commit on, so that the
// column beside encrypted and raw in the same run shows what sharing
// commits gains (at concurrency 1 it commits every write alone).
func addGrouped(ctx context.Context, env *cpEnv) error {
	enc, ok := env.savers["encrypted"].(interface{ Serde() serde.Serializer })
	if !ok {
		return errors.New("bench: the grouped column needs the encrypted saver")
	}
	switch {
	case env.pool != nil:
		s, err := pgsaver.New(env.pool, pgsaver.Options{Schema: env.schema, Serde: enc.Serde(), GroupCommit: groupCommit(groupedMode)})
		if err != nil {
			return err
		}
		env.savers[groupedMode] = s
	case env.path != "":
		s, err := sqlitesaver.Open(ctx, env.path, sqlitesaver.Options{Serde: enc.Serde(), GroupCommit: groupCommit(groupedMode), NoMmap: true})
		if err != nil {
			return err
		}
		prev := env.close
		env.close = func() { s.Close(); prev() }
		env.savers[groupedMode] = s
	default:
		return errors.New("bench: the grouped column needs a PostgreSQL schema or a SQLite file")
	}
	return nil
}
