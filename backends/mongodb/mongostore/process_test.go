package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/store"
)

// storeChildArg is the argument of TestStoreChild, the child process of
// the tests below (this test binary, started again by childproc).
type storeChildArg struct {
	Mode    string // "erase" or "write"
	URI, DB string
	Keys    string // erase: the SQLite key table of the subjects' keys
}

// startChild runs TestStoreChild in a new process in mode on db.
func startChild(t *testing.T, mode string, db *mongo.Database, keys string) *childproc.Child {
	t.Helper()
	return childproc.Start(t, "TestStoreChild", storeChildArg{Mode: mode, URI: mongotest.URI(t), DB: db.Name(), Keys: keys})
}

var carol = store.Namespace{"users", "carol", "notes"}

// subjectHierarchy is a process's key hierarchy over the key table in
// the SQLite file at path, with a subject per namespace under "users".
func subjectHierarchy(t testing.TB, path string) *mvkeys.Hierarchy {
	t.Helper()
	table, err := sqlitekeys.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = table.Close() })
	return keystest.NewHierarchy(t, table, mvkeys.Subjects{NamespacePrefix: []string{"users"}})
}

// TestErasureAgainstAnotherProcess erases a data subject while a writer in
// another process puts the subject's items in a loop, each put pausing
// between its check of the subject's key and its write (the window a slow
// network opens). This process destroys the keys, drains the writes and
// deletes the subject's namespace, as vault.Forget does; then, for a
// while, no item of the subject may appear: a put that found the key live
// must have written before the deletion, every later one must fail. With
// a lock of one process only, the draining does not wait for the other
// process, whose paused put then stores an item sealed under the
// destroyed key after the deletion.
func TestErasureAgainstAnotherProcess(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	keysPath := filepath.Join(t.TempDir(), "keys.db")
	h := subjectHierarchy(t, keysPath)
	st := newStore(t, db, mongostore.Options{Serde: h})
	if err := st.Put(ctx, carol, "first", map[string]any{"text": "allergic to peanuts"}); err != nil {
		t.Fatal(err)
	}

	child := startChild(t, "erase", db, keysPath)
	fenced, result := 0, ""
	for l := range child.Lines {
		switch {
		case l == "FENCED":
			if fenced++; fenced != 3 {
				continue
			}
			// The child's third put found carol's key live and
			// pauses before its write: erase carol now.
			if _, err := h.StartErasure(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if err := st.DrainWrites(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := st.DeletePrefix(ctx, store.Namespace{"users", "carol"}); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(l, "DONE "):
			result = strings.TrimPrefix(l, "DONE ")
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child process: %v", err)
	}
	if result != "erased" {
		t.Fatalf("the child's puts ended with %q, want a put refused as erased", result)
	}
	// The child has stopped; look a while longer all the same.
	items := db.Collection(mongostore.DefaultCollection)
	for range 10 {
		var left []bson.M
		cur, err := items.Find(ctx, bson.D{{Key: "namespace_str", Value: bson.D{{Key: "$gte", Value: "users/carol/"}, {Key: "$lt", Value: "users/carol0"}}}},
			options.Find().SetProjection(bson.D{{Key: "key", Value: 1}}))
		if err == nil {
			err = cur.All(ctx, &left)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Fatalf("after the erasure, %d items of the erased subject are stored (sealed under its destroyed key), written by the other process: %v", len(left), left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStoreChild is the child process of the tests above.
func TestStoreChild(t *testing.T) {
	var arg storeChildArg
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of the multi-process tests")
	}
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(arg.URI))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(ctx) }()
	db := client.Database(arg.DB)
	switch arg.Mode {
	case "erase":
		st, err := mongostore.New(ctx, db, mongostore.Options{Serde: subjectHierarchy(t, arg.Keys)})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		mongostore.SetBeforeWrite(st, func() {
			childproc.Say("FENCED")
			time.Sleep(300 * time.Millisecond)
		})
		for i := range 100 {
			err := st.Put(ctx, carol, fmt.Sprintf("k%d", i), map[string]any{"text": "allergic to peanuts", "i": i})
			switch {
			case errors.Is(err, mvkeys.ErrSubjectErased):
				childproc.Say("DONE erased")
				return
			case err != nil:
				childproc.Say("DONE error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
				return
			}
		}
		childproc.Say("DONE never refused")
	case "write":
		mongostore.NoFloatCopy(t)
		st, err := mongostore.New(ctx, db, mongostore.Options{Index: twoWritersIndex})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		childproc.Say("READY")
		if err := writeLoop(ctx, st, "p1"); err != nil {
			childproc.Say("DONE error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		childproc.Say("DONE ok")
	default:
		t.Fatalf("unknown mode %q", arg.Mode)
	}
}

// twoWritersIndex is the index of TestTwoWritingProcesses's stores.
var twoWritersIndex = &store.IndexConfig{Embedder: denseEmbedder{64}, Fields: []string{"text"}}

const (
	writeRounds = 20 // each process's rounds
	writeBatch  = 8  // items a round puts
)

var sharedNS = store.Namespace{"shared", "docs"}

// writeLoop is one process's writes in TestTwoWritingProcesses: each
// round puts its own items and one both processes put, deletes one of its
// own from the round before, and adds one to a counter both processes
// update (a read-modify-write through PutIf).
func writeLoop(ctx context.Context, st *mongostore.Store, who string) error {
	for r := range writeRounds {
		var ops []store.Op
		for j := range writeBatch {
			key := fmt.Sprintf("%s-%02d-%d", who, r, j)
			ops = append(ops, store.PutOp{Namespace: sharedNS, Key: key, Value: map[string]any{"text": "text " + key}})
		}
		both := fmt.Sprintf("both-%02d", r)
		ops = append(ops, store.PutOp{Namespace: sharedNS, Key: both, Value: map[string]any{"text": "text " + both + " " + who}})
		if r > 0 {
			ops = append(ops, store.PutOp{Namespace: sharedNS, Key: fmt.Sprintf("%s-%02d-0", who, r-1)}) // a delete
		}
		if _, err := st.Batch(ctx, ops); err != nil {
			return fmt.Errorf("round %d: batch: %w", r, err)
		}
		err := store.Update(ctx, st, store.Namespace{"shared"}, "counter", func(cur *store.Item) (map[string]any, error) {
			n := 0.0
			if cur != nil {
				n, _ = cur.Value["n"].(float64)
			}
			return map[string]any{"n": n + 1}, nil
		})
		if err != nil {
			return fmt.Errorf("round %d: counter: %w", r, err)
		}
	}
	return nil
}

// TestTwoWritingProcesses runs writers in two processes (this one and the
// test binary re-executed) on one store and namespace at once: each puts
// its items in batches, puts items the other puts too, deletes, and
// updates one counter through PutIf. After both finish nothing is lost
// (every item either wrote is there, every increment counted) and
// searches rank as an exact scan does, in this process (whose index
// followed the other's generations) and in one opened afterwards.
func TestTwoWritingProcesses(t *testing.T) {
	mongostore.NoFloatCopy(t)
	ctx := context.Background()
	db := mongotest.Database(t)
	a := newStore(t, db, mongostore.Options{Index: twoWritersIndex})
	child := startChild(t, "write", db, "")
	var werr error
	result := ""
	for l := range child.Lines {
		switch {
		case l == "READY":
			werr = writeLoop(ctx, a, "p0")
		case strings.HasPrefix(l, "DONE "):
			result = strings.TrimPrefix(l, "DONE ")
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child process: %v", err)
	}
	if werr != nil || result != "ok" {
		t.Fatalf("writers: this process %v, the other %s", werr, result)
	}

	it, err := a.Get(ctx, store.Namespace{"shared"}, "counter")
	if err != nil || it == nil {
		t.Fatalf("counter: %v %v", it, err)
	}
	if n, _ := it.Value["n"].(float64); n != 2*writeRounds {
		t.Errorf("the counter both processes incremented %d times each holds %v: increments were lost", writeRounds, it.Value["n"])
	}
	for _, who := range []string{"p0", "p1"} {
		for r := range writeRounds {
			for j := range writeBatch {
				key := fmt.Sprintf("%s-%02d-%d", who, r, j)
				it, err := a.Get(ctx, sharedNS, key)
				if err != nil {
					t.Fatal(err)
				}
				if deleted := j == 0 && r < writeRounds-1; (it == nil) != deleted {
					t.Fatalf("%s: present %v, deleted %v", key, it != nil, deleted)
				}
			}
		}
	}
	exact := newStore(t, db, mongostore.Options{Index: twoWritersIndex, VectorIndexBytes: -1})
	later := newStore(t, db, mongostore.Options{Index: twoWritersIndex})
	for q := range 8 {
		query := fmt.Sprintf("query %d", q)
		want, err := exact.Search(ctx, sharedNS, store.SearchOptions{Query: query, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 10 {
			t.Fatalf("exact scan: %d results", len(want))
		}
		for _, s := range []struct {
			who string
			st  *mongostore.Store
		}{{"this process (a writer)", a}, {"a process opened after", later}} {
			got, err := s.st.Search(ctx, sharedNS, store.SearchOptions{Query: query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(searchKeys(got), searchKeys(want)) {
				t.Errorf("%s: %q ranked %v, the exact scan %v", s.who, query, searchKeys(got), searchKeys(want))
			}
		}
	}
}

func searchKeys(r []store.SearchItem) []string {
	var k []string
	for _, it := range r {
		k = append(k, it.Key)
	}
	return k
}

// TestLostLeaseDoesNotOverwrite: a writer whose lease is lost after its
// commit read the items it replaces (the lease expired while it was
// paused, and another writer took it and wrote the same item) must not
// overwrite that writer's item: its write is conditional on the version it
// read, and fails with store.ErrConflict. Two stores on one database stand
// for two processes (each has a lease of its own).
func TestLostLeaseDoesNotOverwrite(t *testing.T) {
	ctx := context.Background()
	for _, existing := range []bool{true, false} {
		t.Run(fmt.Sprintf("existing=%v", existing), func(t *testing.T) {
			db := mongotest.Database(t)
			a := newStore(t, db, mongostore.Options{})
			b := newStore(t, db, mongostore.Options{})
			ns := store.Namespace{"docs"}
			if existing {
				if err := a.Put(ctx, ns, "k", map[string]any{"v": "a1"}); err != nil {
					t.Fatal(err)
				}
			}
			once := false
			mongostore.SetBeforeWrite(a, func() {
				if once {
					return
				}
				once = true
				// a's lease runs out and b takes it.
				if _, err := db.Collection(mongostore.DefaultCollection+".lease").DeleteMany(ctx, bson.D{}); err != nil {
					t.Error(err)
				}
				if err := b.Put(ctx, ns, "k", map[string]any{"v": "b"}); err != nil {
					t.Error(err)
				}
			})
			err := a.Put(ctx, ns, "k", map[string]any{"v": "a2"})
			if !errors.Is(err, store.ErrConflict) || !errors.Is(err, mongostore.ErrLeaseLost) {
				t.Errorf("a put whose lease was lost after its read: %v, want store.ErrConflict and mongostore.ErrLeaseLost", err)
			}
			it, err := b.Get(ctx, ns, "k")
			if err != nil || it == nil || it.Value["v"] != "b" {
				t.Fatalf("after the lost writer's put, the item is %v (%v), want the other writer's", it, err)
			}
		})
	}
}
