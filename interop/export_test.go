package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// copyThread copies thread from src to dst as `memvault threads export |
// memvault threads import` does (threadfile.Export, then threadfile.Import)
// with a target written checkpoint by checkpoint: ImportThread is hidden
// from Import, as it is for a saver that cannot import atomically.
func copyThread(t testing.TB, src, dst checkpointer.Saver, thread string) int {
	t.Helper()
	var file bytes.Buffer
	n, err := threadfile.Export(context.Background(), &file, src, thread)
	if err != nil {
		t.Fatalf("export %s: %v", thread, err)
	}
	if _, err := threadfile.Import(context.Background(), &file, struct{ checkpointer.Saver }{dst}, threadfile.ImportOptions{}); err != nil {
		t.Fatalf("import %s: %v", thread, err)
	}
	return n
}

// TestExportImportJSThread: threads written by JS LangGraph are copied
// through memvault into another schema with integer versions and plain
// JSONPlus values; JS reads each copy exactly as it reads the original,
// continues the conversation, and memvault reads the continuation.
func TestExportImportJSThread(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	srcPool, srcSchema := pgtest.Schema(t)
	var out writeOutput
	runNode(t, &out, "write.mjs", srcSchema)
	fixtureThreads(t, out)
	src, err := pgsaver.New(srcPool, pgsaver.Options{Schema: srcSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Setup(ctx); err != nil {
		t.Fatal(err)
	}

	dstPool, dstSchema := pgtest.Schema(t)
	// Default settings on the target (string versions): JS's integer
	// versions must stay integers for JS to continue the copy.
	dst, err := pgsaver.New(dstPool, pgsaver.Options{Schema: dstSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{jsrows.JSGraphThread, jsrows.JSSendsThread} {
		if n := copyThread(t, src, dst, thread); n != len(out.Tuples[thread]) {
			t.Fatalf("copied %d checkpoints of %s, JS wrote %d", n, thread, len(out.Tuples[thread]))
		}
	}

	// JS reads the copies as it reads the originals.
	for _, thread := range []string{jsrows.JSGraphThread, jsrows.JSSendsThread} {
		t.Run("js reads "+thread, func(t *testing.T) {
			var r readOutput
			runNode(t, &r, "read.mjs", dstSchema, thread)
			want := out.Tuples[thread]
			if len(r.Tuples) != len(want) {
				t.Fatalf("JS lists %d checkpoints in the copy, %d in the original", len(r.Tuples), len(want))
			}
			for i := range want {
				checkSameJSView(t, fmt.Sprintf("%s tuple %d", thread, i), r.Tuples[i], want[i])
				if thread != jsrows.JSGraphThread || r.Tuples[i].Config.CheckpointID != out.Threads[thread]["step1"] {
					continue
				}
				// The one thing a copy loses: memvault reads JS's undefined
				// as nil, so JS gets null back.
				var scratch map[string]any
				if err := json.Unmarshal(r.Tuples[i].ChannelValues["scratch"].JS, &scratch); err != nil {
					t.Fatal(err)
				}
				if v, ok := scratch["missing"]; !ok || v != nil {
					t.Errorf("scratch.missing in the copy, as JS reads it = %v (present %v), want null", v, ok)
				}
			}
		})
	}

	// JS continues the copied conversation; memvault reads it.
	var r readOutput
	runNode(t, &r, "read.mjs", dstSchema, jsrows.JSGraphThread, "--continue")
	if r.Continued == nil {
		t.Fatal("read.mjs did not continue the thread")
	}
	ids := out.Threads[jsrows.JSGraphThread]
	latest, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: jsrows.JSGraphThread})
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || latest.Config.CheckpointID != r.Continued.Config.CheckpointID || latest.ParentConfig == nil || latest.ParentConfig.CheckpointID != ids["step1"] {
		t.Fatalf("memvault latest = %+v, want JS's %s with parent %s", latest, r.Continued.Config.CheckpointID, ids["step1"])
	}
	checkTuple(t, latest, r.Continued.Tuple)
	if got := latest.Checkpoint.ChannelVersions["messages"]; got != "3" {
		t.Errorf("messages version after JS's step = %q, want 3", got)
	}
	if msgs, _ := latest.Checkpoint.ChannelValues["messages"].([]any); len(msgs) != 4 {
		t.Errorf("messages after JS's step = %#v, want the 3 copied and JS's", latest.Checkpoint.ChannelValues["messages"])
	}
}

// TestMemvaultNullJSReadable: JS graphs write null values all the time (the
// branch:to:<node> channels and their writes). A nil channel value or
// pending write that memvault writes must be readable by JS LangGraph,
// whose serializer reads only the "json" and "bytes" types.
func TestMemvaultNullJSReadable(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema, VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(0), TS: cpTime(0),
		ChannelValues:   map[string]any{"branch:to:agent": nil, "messages": []any{"hi"}},
		ChannelVersions: map[string]string{"branch:to:agent": "1", "messages": "1"},
	}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "nulls"}, cp, checkpointer.Metadata{"source": "loop", "step": 0}, map[string]string{"branch:to:agent": "1", "messages": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "branch:to:tools", Value: nil}}, "task-agent", ""); err != nil {
		t.Fatal(err)
	}
	var types []string
	rows, err := pool.Query(ctx, `SELECT type FROM checkpoint_blobs WHERE channel = 'branch:to:agent' UNION ALL SELECT type FROM checkpoint_writes`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		if err := rows.Scan(&typ); err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range types {
		if typ != serde.TypeJSON && typ != serde.TypeBytes {
			t.Errorf("memvault stored a nil value with type %q; JS LangGraph's JsonPlusSerializer.loadsTyped throws \"Unknown serialization type: %s\" on it (write nil as type \"json\", data \"null\", which Python reads too)", typ, typ)
		}
	}
	var r readOutput
	runNode(t, &r, "read.mjs", schema, "nulls")
	if r.Latest == nil {
		t.Fatal("JS finds no checkpoint")
	}
	checkTuple(t, mustGet(t, s, cfg), *r.Latest)
}

func mustGet(t testing.TB, s checkpointer.Saver, cfg checkpointer.Config) *checkpointer.Tuple {
	t.Helper()
	tu, err := s.GetTuple(context.Background(), cfg)
	if err != nil || tu == nil {
		t.Fatalf("GetTuple %+v: %v, %v", cfg, tu, err)
	}
	return tu
}

// importThreadItems copies thread from src to dst as `memvault threads
// export | memvault threads import` does with a target that is a
// checkpointer.ThreadImporter: the whole thread in one ImportThread call.
func importThreadItems(t testing.TB, src, dst checkpointer.Saver, thread string) int {
	t.Helper()
	if _, ok := dst.(checkpointer.ThreadImporter); !ok {
		t.Fatalf("%T is not a checkpointer.ThreadImporter", dst)
	}
	var file bytes.Buffer
	n, err := threadfile.Export(context.Background(), &file, src, thread)
	if err != nil {
		t.Fatalf("export %s: %v", thread, err)
	}
	if _, err := threadfile.Import(context.Background(), &file, dst, threadfile.ImportOptions{}); err != nil {
		t.Fatalf("import %s: %v", thread, err)
	}
	return n
}

// TestImportJSThreadDefaultSettings: a thread JS LangGraph wrote (integer
// versions), imported into another database whose saver has the default
// settings (string versions, no MEMVAULT_VERSIONS=int), through a SQLite
// file on the way, keeps its integer versions, so JS continues it.
func TestImportJSThreadDefaultSettings(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	srcPool, srcSchema := pgtest.Schema(t)
	var out writeOutput
	runNode(t, &out, "write.mjs", srcSchema)
	src, err := pgsaver.New(srcPool, pgsaver.Options{Schema: srcSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	// A SQLite file with default settings on the way.
	mid, err := sqlitesaver.Open(ctx, filepath.Join(t.TempDir(), "mid.db"), sqlitesaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	dstPool, dstSchema := pgtest.Schema(t)
	dst, err := pgsaver.New(dstPool, pgsaver.Options{Schema: dstSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	thread := jsrows.JSGraphThread
	if n := importThreadItems(t, src, mid, thread); n != len(out.Tuples[thread]) {
		t.Fatalf("copied %d checkpoints into SQLite, JS wrote %d", n, len(out.Tuples[thread]))
	}
	importThreadItems(t, mid, dst, thread)

	var r readOutput
	runNode(t, &r, "read.mjs", dstSchema, thread, "--continue")
	if r.Continued == nil {
		t.Fatal("read.mjs did not continue the thread")
	}
	latest, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || latest.Config.CheckpointID != r.Continued.Config.CheckpointID {
		t.Fatalf("memvault latest = %+v, want JS's %s", latest, r.Continued.Config.CheckpointID)
	}
	if got := latest.Checkpoint.ChannelVersions["messages"]; got != "3" {
		t.Errorf("messages version after JS's step = %q, want 3", got)
	}
}
