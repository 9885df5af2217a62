package mongostore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/memvault/memvault/store"
)

// storeChildEnv carries "MODE URI DATABASE ARG" to the child processes of
// the tests below (this test binary, re-executed).
const storeChildEnv = "MEMVAULT_MONGOSTORE_CHILD"

// startChild runs TestStoreChild in a new process with args and returns
// its standard output, line by line, and a function that waits for it.
func startChild(t *testing.T, args ...string) (*bufio.Scanner, func() error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreChild$", "-test.v")
	cmd.Env = append(os.Environ(), storeChildEnv+"="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return bufio.NewScanner(out), cmd.Wait
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

	lines, wait := startChild(t, "erase", mongotest.URI(t), db.Name(), keysPath)
	fenced, result := 0, ""
	for lines.Scan() {
		switch l := lines.Text(); {
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
	if err := wait(); err != nil {
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
	arg := os.Getenv(storeChildEnv)
	if arg == "" {
		t.Skip("run by the multi-process tests")
	}
	f := strings.Fields(arg)
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(f[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(ctx) }()
	db := client.Database(f[2])
	switch f[0] {
	case "erase":
		st, err := mongostore.New(ctx, db, mongostore.Options{Serde: subjectHierarchy(t, f[3])})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		mongostore.SetBeforeCommit(st, func() {
			fmt.Println("FENCED")
			time.Sleep(300 * time.Millisecond)
		})
		for i := range 100 {
			err := st.Put(ctx, carol, fmt.Sprintf("k%d", i), map[string]any{"text": "allergic to peanuts", "i": i})
			switch {
			case errors.Is(err, mvkeys.ErrSubjectErased):
				fmt.Println("DONE erased")
				return
			case err != nil:
				fmt.Println("DONE error:", err)
				return
			}
		}
		fmt.Println("DONE never refused")
	default:
		t.Fatalf("unknown mode %q", f[0])
	}
}
