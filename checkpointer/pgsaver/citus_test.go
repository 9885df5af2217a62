package pgsaver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// The Citus tests run the saver on a real Citus cluster (a coordinator and
// two workers, pgtest.CitusSchema), where Setup distributes the tables by
// thread_id. They skip without Citus installed and fail instead when
// MEMVAULT_REQUIRE_CITUS=1 (CI); `go test -run Citus` runs exactly them.

// newCitusSaver is newSaver on the Citus coordinator.
func newCitusSaver(t testing.TB, opts pgsaver.Options) (*pgsaver.Saver, *pgxpool.Pool) {
	t.Helper()
	pool, _ := pgtest.CitusSchema(t)
	s, err := pgsaver.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, pool
}

func TestConformanceCitus(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newCitusSaver(t, pgsaver.Options{})
		return s
	})
}

func TestConformanceCitusEncrypted(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newCitusSaver(t, pgsaver.Options{Serde: encrypted(t)})
		return s
	})
}

// TestErasureCitus runs the erasure suite with the key table in the same
// database: a table local to the coordinator, which every writer's
// transaction locks (keys.SQLFencer) beside its distributed rows.
func TestErasureCitus(t *testing.T) {
	pool, schema := pgtest.CitusSchema(t)
	kt, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkpointertest.RunErasure(t, kt, saverOn(pool))
}

// saverOn opens set-up savers on pool with the serializer a suite gives.
func saverOn(pool *pgxpool.Pool) func(t *testing.T, s serde.Serializer) checkpointer.Saver {
	return func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := pgsaver.New(pool, pgsaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return sv
	}
}

func TestReencryptCitus(t *testing.T) {
	pool, _ := pgtest.CitusSchema(t)
	checkpointertest.RunReencrypt(t, saverOn(pool))
}

// BenchmarkCitusOverhead runs the bench workload (encrypted) on plain
// PostgreSQL and on the Citus coordinator of the same machine, in one run:
// the per-operation cost of distribution, which one machine can show
// (scale-out gains it cannot). Put, PutWrites, GetTuple and List(10) of one
// thread each route to one shard.
func BenchmarkCitusOverhead(b *testing.B) {
	for _, where := range []string{"postgres", "citus"} {
		open := newSaver
		if where == "citus" {
			open = newCitusSaver
		}
		newEnv := func(b *testing.B) *benchEnv {
			s, pool := open(b, pgsaver.Options{Serde: encrypted(b)})
			return &benchEnv{pool: pool, s: s}
		}
		b.Run(where+"/put", func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			vals := benchValues()
			versions := map[string]string{}
			for ch := range vals {
				versions[ch] = e.s.NextVersion("")
			}
			cfg := checkpointer.Config{ThreadID: "bench-put"}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				nv := map[string]string{"messages": e.s.NextVersion(versions["messages"]), "step": e.s.NextVersion(versions["step"])}
				versions["messages"], versions["step"] = nv["messages"], nv["step"]
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: vals,
					ChannelVersions: versions, VersionsSeen: map[string]map[string]string{"agent": versions}}
				var err error
				if cfg, err = e.s.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nv); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(where+"/put_writes", func(b *testing.B) {
			e := newEnv(b)
			cfg := e.seed(b, "bench-writes", 1)
			writes := []checkpointer.Write{{Channel: "messages", Value: benchValues()["messages"]}, {Channel: "step", Value: 4}}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := e.s.PutWrites(context.Background(), cfg, writes, fmt.Sprintf("task-%d", i), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(where+"/get_tuple", func(b *testing.B) {
			e := newEnv(b)
			e.seed(b, "bench-get", 100)
			b.ReportAllocs()
			for b.Loop() {
				if tu, err := e.s.GetTuple(context.Background(), checkpointer.Config{ThreadID: "bench-get"}); err != nil || tu == nil {
					b.Fatal(tu, err)
				}
			}
		})
		b.Run(where+"/list10", func(b *testing.B) {
			e := newEnv(b)
			e.seed(b, "bench-list", 100)
			cfg := &checkpointer.Config{ThreadID: "bench-list"}
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range e.s.List(context.Background(), cfg, checkpointer.ListOptions{Limit: 10}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 10 {
					b.Fatal(n)
				}
			}
		})
	}
}
