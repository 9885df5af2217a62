package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/postgres"
	"github.com/memvault/memvault/internal/pgtest"
)

func TestConformance(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, postgres.Options{})
		return s
	})
}

func TestConformanceEncrypted(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, postgres.Options{Serde: encrypted(t)})
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
		s, err := postgres.New(p, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	})
}
