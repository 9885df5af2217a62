package mongovault

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// countingTable is a SQLite key table that counts its LiveKey reads (the
// key-table read of every write's fence).
type countingTable struct {
	*sqlitekeys.Table
	live atomic.Int64
}

func (c *countingTable) LiveKey(ctx context.Context, subject, keyID string) (bool, error) {
	c.live.Add(1)
	return c.Table.LiveKey(ctx, subject, keyID)
}

// benchGuard is the erasure guard vault sets on MongoDB (its marksGuard):
// the marks' ErasedPast, no SQL.
type benchGuard struct{ auditMeta }

func (benchGuard) GuardSQL() string { return "" }

// BenchmarkGuardedWrites counts what one write sends to the server
// (commands, by name and collection) and reads from the key table
// (LiveKey), with per-subject keys and vault's erasure guard on the
// database's marks ("subjects"), and with one encryption key and no
// subjects ("plain"): a put continuing a thread, its pending writes, a
// store put. Commands are counted on a client of its own, so the figures
// do not depend on the machine's load.
func BenchmarkGuardedWrites(b *testing.B) {
	for _, subjects := range []bool{false, true} {
		for _, op := range []string{"put", "put_writes", "store_put"} {
			b.Run(fmt.Sprintf("%s/%s", map[bool]string{false: "plain", true: "subjects"}[subjects], op), func(b *testing.B) {
				benchGuardedWrite(b, subjects, op)
			})
		}
	}
}

func benchGuardedWrite(b *testing.B, subjects bool, op string) {
	ctx := context.Background()
	name := mongotest.Database(b).Name()
	var mu sync.Mutex
	counting := false
	cmds := map[string]int{}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		defer mu.Unlock()
		if counting {
			coll, _ := e.Command.Lookup(e.CommandName).StringValueOK()
			cmds[e.CommandName+" "+coll]++
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(b)).SetMonitor(mon))
	if err != nil {
		b.Fatal(err)
	}
	defer client.Disconnect(ctx)
	db := client.Database(name)

	var sd serde.Serializer
	var table *countingTable
	if subjects {
		t, err := sqlitekeys.Open(ctx, filepath.Join(b.TempDir(), "keys.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer t.Close()
		table = &countingTable{Table: t}
		h := keystest.NewHierarchy(b, table, keys.Subjects{ThreadSeparator: ":", NamespacePrefix: []string{"users"}})
		if err := h.SetErasureGuard(ctx, benchGuard{auditMeta{db.Collection(metaCol)}}); err != nil {
			b.Fatal(err)
		}
		sd = h
	} else {
		k, err := crypto.NewKey([]byte("0123456789abcdef0123456789abcdef"))
		if err != nil {
			b.Fatal(err)
		}
		ring, err := crypto.NewKeyring(k)
		if err != nil {
			b.Fatal(err)
		}
		if sd, err = serde.NewEncrypted(nil, ring); err != nil {
			b.Fatal(err)
		}
	}
	sv, err := mongosaver.New(db, mongosaver.Options{Serde: sd})
	if err != nil {
		b.Fatal(err)
	}
	if err := sv.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	defer sv.Close()
	st, err := mongostore.New(ctx, db, mongostore.Options{Serde: sd})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()

	cfg := checkpointer.Config{ThreadID: "carol:1"}
	v := ""
	put := func(i int) {
		v = sv.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"notes": fmt.Sprint("note ", i)}, ChannelVersions: map[string]string{"notes": v}}
		if cfg, err = sv.Put(ctx, cfg, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 3 { // the thread's lease taken, what the saver keeps known
		put(i)
	}
	mu.Lock()
	counting = true
	mu.Unlock()
	var live0 int64
	if table != nil {
		live0 = table.live.Load()
	}
	b.ResetTimer()
	for i := range b.N {
		switch op {
		case "put":
			put(i + 3)
		case "put_writes":
			if err := sv.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: i}}, fmt.Sprint("task", i), ""); err != nil {
				b.Fatal(err)
			}
		case "store_put":
			if err := st.Put(ctx, store.Namespace{"users", "carol"}, fmt.Sprint("k", i), map[string]any{"v": i}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	mu.Lock()
	counting = false
	total := 0
	for _, n := range cmds {
		total += n
	}
	b.ReportMetric(float64(total)/float64(b.N), "cmds/op")
	if b.N >= 10 {
		b.Logf("%s, %d ops: %v", op, b.N, cmds)
	}
	mu.Unlock()
	if table != nil {
		b.ReportMetric(float64(table.live.Load()-live0)/float64(b.N), "livekey/op")
	}
}
