package pgsaver_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// TestConformanceGroupCommit runs the suite on savers with group commit
// on, plaintext and encrypted.
func TestConformanceGroupCommit(t *testing.T) {
	for name, opts := range map[string]func(t *testing.T) pgsaver.Options{
		"Plain":     func(*testing.T) pgsaver.Options { return pgsaver.Options{GroupCommit: 64} },
		"Encrypted": func(t *testing.T) pgsaver.Options { return pgsaver.Options{Serde: encrypted(t), GroupCommit: 64} },
	} {
		t.Run(name, func(t *testing.T) {
			checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
				s, _ := newSaver(t, opts(t))
				return s
			})
		})
	}
}

// TestConformanceWriteGroup runs the suite with every write stored by the
// driver's WriteGroup (a group of one), as the writes of a group are.
func TestConformanceWriteGroup(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newSaver(t, pgsaver.Options{Serde: encrypted(t)})
		e, err := pgsaver.EveryWriteGrouped(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

// TestErasureWriteGroup runs the erasure suite with the key table in the
// database (each write's fence statements in the group's batch), every
// write stored by WriteGroup, and on savers with group commit on.
func TestErasureWriteGroup(t *testing.T) {
	for name, open := range map[string]func(pool *pgxpool.Pool) func(t *testing.T, s serde.Serializer) checkpointer.Saver{
		"WriteGroup": func(pool *pgxpool.Pool) func(t *testing.T, s serde.Serializer) checkpointer.Saver {
			return func(t *testing.T, ser serde.Serializer) checkpointer.Saver {
				s, err := pgsaver.New(pool, pgsaver.Options{Serde: ser})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Setup(t.Context()); err != nil {
					t.Fatal(err)
				}
				e, err := pgsaver.EveryWriteGrouped(s)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
		},
		"GroupCommit": func(pool *pgxpool.Pool) func(t *testing.T, s serde.Serializer) checkpointer.Saver {
			return func(t *testing.T, ser serde.Serializer) checkpointer.Saver {
				s, err := pgsaver.New(pool, pgsaver.Options{Serde: ser, GroupCommit: 64})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Setup(t.Context()); err != nil {
					t.Fatal(err)
				}
				return s
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			pool, schema := pgtest.Schema(t)
			kt, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			if err := kt.Setup(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkpointertest.RunErasure(t, kt, open(pool))
		})
	}
}
