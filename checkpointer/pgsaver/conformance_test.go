package pgsaver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

func TestConformance(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, pgsaver.Options{})
		return s
	})
}

// TestOptions runs the options check every saver's constructor shares
// (New does not touch the database).
func TestOptions(t *testing.T) {
	pool := pgtest.Pool(t)
	checkpointertest.RunOptions(t, func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy) (checkpointer.Saver, error) {
		return pgsaver.New(pool, pgsaver.Options{VersionStyle: style, Retention: p})
	})
}

func TestConformanceEncrypted(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, pgsaver.Options{Serde: encrypted(t)})
		return s
	})
}

// TestConformanceSubjects runs the suite with per-subject keys: each
// thread's values sealed under the data key of the subject its id names.
func TestConformanceSubjects(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, pgsaver.Options{Serde: testkeys.Subjects(t)})
		return s
	})
}

// TestConformanceSimpleProtocol runs the suite with pgx's simple protocol,
// the mode for PgBouncer in transaction pooling (no prepared statements).
func TestConformanceSimpleProtocol(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		pool, _ := pgtest.Schema(t)
		cfg := pool.Config()
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		p, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		s, err := pgsaver.New(p, pgsaver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// txSaver runs every write the suite makes through the saver's …Tx twin,
// in a transaction of the caller's (River's executorWithTx): Put, PutWrites
// DeleteThread and DeleteCheckpoint each begin a transaction on the pool,
// call their …Tx twin in it and commit. Reads, which have no twin,
// and the optional capabilities go to the saver as they are.
type txSaver struct {
	*pgsaver.Saver
	pool *pgxpool.Pool
}

func (s txSaver) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (s txSaver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) (checkpointer.Config, error) {
	var out checkpointer.Config
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.Saver.PutTx(ctx, tx, cfg, cp, md, nv)
		return err
	})
	return out, err
}

func (s txSaver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Saver.PutWritesTx(ctx, tx, cfg, writes, taskID, taskPath) })
}

func (s txSaver) DeleteThread(ctx context.Context, threadID string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Saver.DeleteThreadTx(ctx, tx, threadID) })
}

func (s txSaver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Saver.DeleteCheckpointTx(ctx, tx, cfg) })
}

// TestConformanceTx runs the whole suite with every write going through
// the …Tx twins, plaintext and encrypted.
func TestConformanceTx(t *testing.T) {
	for name, opts := range map[string]func(t *testing.T) pgsaver.Options{
		"Plain":     func(*testing.T) pgsaver.Options { return pgsaver.Options{} },
		"Encrypted": func(t *testing.T) pgsaver.Options { return pgsaver.Options{Serde: encrypted(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
				s, pool := newSaver(t, opts(t))
				return txSaver{s, pool}
			})
		})
	}
}

// TestTxRollback: what a …Tx twin wrote is gone when the caller rolls its
// transaction back, and there when it commits.
func TestTxRollback(t *testing.T) {
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{})
	v := s.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "x"},
		ChannelVersions: map[string]string{"a": v}, VersionsSeen: map[string]map[string]string{}}
	for _, commit := range []bool{false, true} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := s.PutTx(ctx, tx, checkpointer.Config{ThreadID: "rb"}, cp, nil, map[string]string{"a": v})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWritesTx(ctx, tx, cfg, []checkpointer.Write{{Channel: "w", Value: 1}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "rb"})
		if err != nil {
			t.Fatal(err)
		}
		if (tp != nil) != commit || (commit && len(tp.PendingWrites) != 1) {
			t.Fatalf("commit %v: GetTuple = %+v", commit, tp)
		}
	}
}

// TestForeignDocuments: documents another LangGraph writer stored read as
// on every other backend (checkpointertest.RunForeignDocuments).
func TestForeignDocuments(t *testing.T) {
	checkpointertest.RunForeignDocuments(t, func(t *testing.T) (checkpointer.Saver, checkpointertest.StoreDocument) {
		s, pool := newSaver(t, pgsaver.Options{})
		return s, func(t *testing.T, thread, ns, id, parent string, doc []byte) {
			_, err := pool.Exec(t.Context(), `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
				VALUES ($1, $2, $3, nullif($4, ''), $5, '{}')`, thread, ns, id, parent, string(doc))
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}
