package threadfile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// savers are the backends the import tests run on: a fresh, empty saver
// each call.
func savers() map[string]func(t *testing.T) checkpointer.Saver {
	return map[string]func(t *testing.T) checkpointer.Saver{
		"memory": func(t *testing.T) checkpointer.Saver {
			s, err := memsaver.New(memsaver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"sqlite": func(t *testing.T) checkpointer.Saver {
			s, err := sqlitesaver.Open(context.Background(), filepath.Join(t.TempDir(), "cp.db"), sqlitesaver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) checkpointer.Saver {
			s, err := pgsaver.New(pgtest.Pool(t), pgsaver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// putThread stores n checkpoints of thread, each the child of the one
// before, each changing channel "n" and with one pending write.
func putThread(t *testing.T, sv checkpointer.Saver, thread string, n int) []string {
	t.Helper()
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: thread}
	version, first := "", ""
	var ids []string
	for i := range n {
		version = sv.NextVersion(version)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"n": int64(i)},
			ChannelVersions: map[string]string{"n": version}, VersionsSeen: map[string]map[string]string{"node": {"n": version}}}
		nv := map[string]string{"n": version}
		if i == 0 {
			// A channel written once: the checkpoints after reference the
			// first one's value.
			first = version
			cp.ChannelValues["first"] = "kept"
			nv["first"] = first
		}
		cp.ChannelVersions["first"] = first
		var err error
		if cfg, err = sv.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, nv); err != nil {
			t.Fatal(err)
		}
		if err := sv.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "n", Value: int64(100 + i)}}, fmt.Sprint("task-", i), ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
	}
	return ids
}

func export(t *testing.T, sv checkpointer.Saver, thread string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := threadfile.Export(context.Background(), &buf, sv, thread); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestImportPrunedThread: a thread whose oldest checkpoints a retention
// sweep removed (its oldest kept checkpoint's parent is gone) exports and
// imports into another database, and comes out as it went in: the same
// checkpoints, parents, values and writes; the export of the copy is the
// export of the original.
func TestImportPrunedThread(t *testing.T) {
	for name, newSaver := range savers() {
		t.Run(name, func(t *testing.T) {
			for _, how := range []string{"sweep", "delete_checkpoint"} {
				t.Run(how, func(t *testing.T) { testImportPruned(t, newSaver, how) })
			}
		})
	}
}

// testImportPruned is TestImportPrunedThread with the thread's three
// oldest checkpoints removed by a retention sweep (threads sweep
// --keep-latest) or one by one (Eino's KeepLast).
func testImportPruned(t *testing.T, newSaver func(t *testing.T) checkpointer.Saver, how string) {
	ctx := context.Background()
	src := newSaver(t)
	ids := putThread(t, src, "pruned", 6)
	switch how {
	case "sweep":
		rep, err := src.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 3}, checkpointer.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checkpoints != 3 {
			t.Fatalf("sweep removed %d checkpoints, want 3", rep.Checkpoints)
		}
	case "delete_checkpoint":
		for _, id := range ids[:3] {
			if err := src.(checkpointer.CheckpointDeleter).DeleteCheckpoint(ctx, checkpointer.Config{ThreadID: "pruned", CheckpointID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	oldest, err := src.GetTuple(ctx, checkpointer.Config{ThreadID: "pruned", CheckpointID: ids[3]})
	if err != nil || oldest == nil || oldest.ParentConfig == nil || oldest.ParentConfig.CheckpointID != ids[2] {
		t.Fatalf("oldest kept checkpoint: %+v %v, want one whose parent is the pruned %s", oldest, err, ids[2])
	}
	file := export(t, src, "pruned")

	dst := newSaver(t)
	st, err := threadfile.Import(ctx, bytes.NewReader(file), dst, threadfile.ImportOptions{})
	if err != nil {
		t.Fatalf("import of a pruned thread: %v", err)
	}
	if st.Imported != 3 || st.Writes != 3 {
		t.Fatalf("import stats %+v, want 3 checkpoints and 3 writes", st)
	}
	if again := export(t, dst, "pruned"); !bytes.Equal(again, file) {
		t.Fatalf("the copy exports differently:\n%s\nwant\n%s", again, file)
	}
	got, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "pruned"})
	if err != nil || got == nil || got.Checkpoint.ChannelValues["first"] != "kept" {
		t.Fatalf("latest imported checkpoint: %+v %v, want the value written by the pruned first checkpoint", got, err)
	}

	// Importing again changes nothing; a file that lost its first
	// line (a truncated copy, not a pruned thread) is still refused.
	if st, err := threadfile.Import(ctx, bytes.NewReader(file), dst, threadfile.ImportOptions{}); err != nil || st.Imported != 0 || st.Skipped != 3 {
		t.Fatalf("second import: %+v %v", st, err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(file)), "\n")
	if _, err := threadfile.Import(ctx, strings.NewReader(strings.Join(lines[1:], "")), newSaver(t), threadfile.ImportOptions{}); !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("import of a file missing its first line: %v, want ErrInvalidFile naming line 1", err)
	}
}

// TestImportRefusesDuplicateCheckpoint: a file holding one checkpoint
// twice (with different content) is refused, naming both lines, and
// nothing is written; it used to report 11 imported while 10 were stored.
func TestImportRefusesDuplicateCheckpoint(t *testing.T) {
	for name, newSaver := range savers() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := newSaver(t)
			putThread(t, src, "dup", 10)
			lines := strings.Split(strings.TrimSpace(string(export(t, src, "dup"))), "\n")
			var l threadfile.Line
			if err := json.Unmarshal([]byte(lines[3]), &l); err != nil {
				t.Fatal(err)
			}
			l.ChannelValues["n"] = threadfile.Value{Type: "json", JSON: json.RawMessage(`"changed"`)}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			file := strings.Join(append(lines, string(b)), "\n") + "\n"

			dst := newSaver(t)
			st, err := threadfile.Import(ctx, strings.NewReader(file), dst, threadfile.ImportOptions{})
			if !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "line 11") || !strings.Contains(err.Error(), "line 4") {
				t.Fatalf("import of a duplicated checkpoint: %+v %v, want ErrInvalidFile naming lines 11 and 4", st, err)
			}
			if tp, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "dup"}); err != nil || tp != nil {
				t.Fatalf("refused import stored %+v %v", tp, err)
			}
		})
	}
}

// TestVersionRuleOfPutAndImport: Put and Import apply one rule to channel
// versions. An empty version (in channel_versions, new versions or
// versions_seen) is refused by Put, as Import refuses it; any other
// version Put stores (such as the checkpoint-id versions of the trpc-agent
// adapter) exports and imports.
func TestVersionRuleOfPutAndImport(t *testing.T) {
	ctx := context.Background()
	for name, newSaver := range savers() {
		t.Run(name, func(t *testing.T) {
			sv := newSaver(t)
			v := sv.NextVersion("")
			for what, mutate := range map[string]func(cp *checkpointer.Checkpoint, nv map[string]string){
				"versions_seen":    func(cp *checkpointer.Checkpoint, _ map[string]string) { cp.VersionsSeen["node"]["a"] = "" },
				"channel_versions": func(cp *checkpointer.Checkpoint, _ map[string]string) { cp.ChannelVersions["b"] = "" },
				"new_versions":     func(cp *checkpointer.Checkpoint, nv map[string]string) { cp.ChannelVersions["a"], nv["a"] = "", "" },
			} {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "x"},
					ChannelVersions: map[string]string{"a": v}, VersionsSeen: map[string]map[string]string{"node": {"a": v}}}
				nv := map[string]string{"a": v}
				mutate(cp, nv)
				_, err := sv.Put(ctx, checkpointer.Config{ThreadID: "empty-" + what}, cp, nil, nv)
				if !errors.Is(err, checkpointer.ErrInvalidVersion) {
					t.Errorf("Put with an empty version in %s: %v, want checkpointer.ErrInvalidVersion", what, err)
				}
			}

			// Versions that are not LangGraph's numbers but valid text.
			id := checkpointer.NewID(0)
			odd := "1f0c3a2e-v" + id[:8]
			cp := &checkpointer.Checkpoint{V: 4, ID: id, ChannelValues: map[string]any{"a": "x"},
				ChannelVersions: map[string]string{"a": odd}, VersionsSeen: map[string]map[string]string{"node": {"a": odd}}}
			if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: "odd"}, cp, nil, map[string]string{"a": odd}); err != nil {
				t.Fatal(err)
			}
			file := export(t, sv, "odd")
			dst := newSaver(t)
			if _, err := threadfile.Import(ctx, bytes.NewReader(file), dst, threadfile.ImportOptions{}); err != nil {
				t.Fatalf("import of versions Put accepted: %v", err)
			}
			if again := export(t, dst, "odd"); !bytes.Equal(again, file) {
				t.Fatalf("the copy exports differently:\n%s\nwant\n%s", again, file)
			}

			// An empty version in a file is refused, naming the line.
			var l threadfile.Line
			if err := json.Unmarshal(file, &l); err != nil {
				t.Fatal(err)
			}
			l.VersionsSeen["node"]["a"] = ""
			b, _ := json.Marshal(l)
			if _, err := threadfile.Import(ctx, bytes.NewReader(b), newSaver(t), threadfile.ImportOptions{}); !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "line 1") {
				t.Fatalf("import of an empty version: %v, want ErrInvalidFile naming line 1", err)
			}
		})
	}
}

// TestImportRefusesTooLongIDs: a thread file with an identifier longer
// than checkpointer.MaxIDBytes — as a backend without the limit could
// once export — is refused before anything is written, naming its line,
// with checkpointer.ErrIDTooLong, on every backend alike: what one accepts
// every other can hold.
func TestImportRefusesTooLongIDs(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("é", checkpointer.MaxIDBytes/2) + "x" // one byte over
	mutations := map[string]func(l *threadfile.Line){
		"thread_id":       func(l *threadfile.Line) { l.ThreadID = long },
		"checkpoint_ns":   func(l *threadfile.Line) { l.CheckpointNS = long },
		"channel_value":   func(l *threadfile.Line) { l.ChannelValues[long] = l.ChannelValues["n"] },
		"channel_version": func(l *threadfile.Line) { l.ChannelVersions["n"] = long },
		"versions_seen":   func(l *threadfile.Line) { l.VersionsSeen[long] = l.VersionsSeen["node"] },
		"write_task":      func(l *threadfile.Line) { l.PendingWrites[0].TaskID = long },
		"write_channel":   func(l *threadfile.Line) { l.PendingWrites[0].Channel = long },
	}
	for name, newSaver := range savers() {
		t.Run(name, func(t *testing.T) {
			src := newSaver(t)
			putThread(t, src, "long", 3)
			lines := strings.Split(strings.TrimSpace(string(export(t, src, "long"))), "\n")
			for what, mutate := range mutations {
				var l threadfile.Line
				if err := json.Unmarshal([]byte(lines[1]), &l); err != nil {
					t.Fatal(err)
				}
				mutate(&l)
				b, err := json.Marshal(l)
				if err != nil {
					t.Fatal(err)
				}
				file := strings.Join([]string{lines[0], string(b), lines[2]}, "\n") + "\n"
				dst := newSaver(t)
				_, err = threadfile.Import(ctx, strings.NewReader(file), dst, threadfile.ImportOptions{})
				if !errors.Is(err, threadfile.ErrInvalidFile) || !errors.Is(err, checkpointer.ErrIDTooLong) || !strings.Contains(err.Error(), "line 2") {
					t.Errorf("import with a too-long %s: %v, want ErrInvalidFile and checkpointer.ErrIDTooLong naming line 2", what, err)
				}
				for _, thread := range []string{"long", long} {
					if tp, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: thread}); tp != nil || (err != nil && !errors.Is(err, checkpointer.ErrIDTooLong)) {
						t.Errorf("refused import (%s) stored %v, %v", what, tp, err)
					}
				}
			}
		})
	}
}
