package pgsaver_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// turnConn counts round trips: client writes that follow a server reply.
type turnConn struct {
	net.Conn
	mu      *sync.Mutex
	turns   *int
	replied *bool
}

func (c turnConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if *c.replied {
		*c.turns++
		*c.replied = false
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c turnConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	*c.replied = true
	c.mu.Unlock()
	return n, err
}

// TestRoundTrips: once its statements are prepared on a connection, every
// operation costs one round trip to the server.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	base, _ := pgtest.Schema(t)
	cfg := base.Config()
	cfg.MaxConns, cfg.MinConns = 1, 0
	var mu sync.Mutex
	var turns int
	replied := true
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return turnConn{Conn: c, mu: &mu, turns: &turns, replied: &replied}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := pgsaver.New(pool, pgsaver.Options{Serde: encrypted(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}

	var last checkpointer.Config
	ops := []struct {
		name string
		fn   func(i int) error
	}{
		{"Put", func(i int) error {
			cp, nv := step(i+1, nil, map[string]any{"a": i, "b": "x", "c": []any{1}})
			var err error
			if last.ThreadID == "" {
				last.ThreadID = "rt"
			}
			cp.ChannelValues["u"] = "unchanged"
			cp.ChannelVersions["u"] = "1"
			last, err = s.Put(ctx, last, cp, checkpointer.Metadata{"run_id": "r"}, nv)
			return err
		}},
		{"PutWrites", func(i int) error {
			return s.PutWrites(ctx, last, []checkpointer.Write{{Channel: "a", Value: 1}, {Channel: "b", Value: 2}}, "task", "")
		}},
		{"GetTuple", func(int) error { _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "rt"}); return err }},
		{"GetTupleByID", func(int) error { _, err := s.GetTuple(ctx, last); return err }},
		{"List", func(int) error {
			for _, err := range s.List(ctx, &checkpointer.Config{ThreadID: "rt"}, checkpointer.ListOptions{Limit: 10}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"Prune", func(int) error { return s.Prune(ctx, []string{"rt"}, checkpointer.PruneKeepLatest) }},
		{"DeleteForRuns", func(int) error { return s.DeleteForRuns(ctx, []string{"nothing"}) }},
		{"DeleteThread", func(int) error { return s.DeleteThread(ctx, "other") }},
	}
	for _, op := range ops {
		if err := op.fn(0); err != nil { // prepares the statements
			t.Fatalf("%s: %v", op.name, err)
		}
		mu.Lock()
		turns = 0
		mu.Unlock()
		if err := op.fn(1); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		mu.Lock()
		got := turns
		mu.Unlock()
		if got != 1 {
			t.Errorf("%s: %d round trips, want 1", op.name, got)
		}
	}
}
