package threadfile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
)

// bigFile returns a thread file of threads threads, each the three
// checkpoints putThread makes with a channel "text" of size bytes added
// to every one of them.
func bigFile(t *testing.T, threads, size int) []byte {
	t.Helper()
	src := savers()["memory"](t)
	putThread(t, src, "seed", 3)
	seed := strings.Split(strings.TrimSpace(string(export(t, src, "seed"))), "\n")
	text := strings.Repeat("abcdefghij ", size/11+1)[:size]
	var out bytes.Buffer
	for i := range threads {
		for _, line := range seed {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			m["thread_id"] = fmt.Sprintf("thread-%04d", i)
			m["channel_values"].(map[string]any)["text"] = map[string]any{"type": "json", "json": fmt.Sprintf("%d %s", i, text)}
			versions := m["channel_versions"].(map[string]any)
			versions["text"] = versions["n"]
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// heapImporter is a thread importer that keeps nothing: it records the
// live heap at each thread it is handed, and how many it was handed.
type heapImporter struct {
	checkpointer.Saver
	peak    uint64
	threads int
	items   int
}

func (h *heapImporter) ImportThread(_ context.Context, items []checkpointer.ImportCheckpoint) error {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
	h.threads++
	h.items += len(items)
	return nil
}

// TestImportHoldsOneThreadAtATime: importing a file (seekable) holds at
// most the thread being written, not the file: the live heap while threads
// are written stays under a quarter of the file's size. Before, every
// line was parsed and held until the end (the live heap exceeded the
// file's size). A reader that cannot seek is spooled, and imports the
// same.
func TestImportHoldsOneThreadAtATime(t *testing.T) {
	ctx := context.Background()
	file := bigFile(t, 300, 32<<10)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	file = nil // only the file on disk
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	target := &heapImporter{Saver: savers()["memory"](t)}
	st, err := threadfile.Import(ctx, f, target, threadfile.ImportOptions{IntVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Imported != 900 || target.threads != 300 || target.items != 900 {
		t.Fatalf("imported %+v, importer saw %d threads, %d checkpoints; want 900 checkpoints in 300 threads", st.Imported, target.threads, target.items)
	}
	grew := int64(target.peak) - int64(base)
	t.Logf("file %d bytes, live heap grew by at most %d bytes while writing", fi.Size(), grew)
	if grew > fi.Size()/4 {
		t.Errorf("the live heap grew by %d bytes while threads were written, for a file of %d: the import holds the file", grew, fi.Size())
	}

	// Through a reader that cannot seek (a pipe, stdin), the same.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	target = &heapImporter{Saver: savers()["memory"](t)}
	st, err = threadfile.Import(ctx, io.MultiReader(f), target, threadfile.ImportOptions{})
	if err != nil || st.Imported != 900 || target.threads != 300 || target.items != 900 {
		t.Fatalf("through a pipe: %+v, %v; importer saw %d threads, %d checkpoints", st, err, target.threads, target.items)
	}
}

// changingFile reads as first until it is rewound, then as second.
type changingFile struct {
	first, second []byte
	r             *bytes.Reader
	rewound       bool
}

func (c *changingFile) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *changingFile) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart && off == 0 && c.r.Len() < len(c.first) {
		c.rewound = true
		c.r = bytes.NewReader(c.second)
		return 0, nil
	}
	return c.r.Seek(off, whence)
}

// TestImportFileChangedWhileRead: a file that changes between its check
// and its second reading (another program writing it) is refused with
// ErrInvalidFile naming the change, and the thread that changed is not
// written: every thread written is the thread checked. The threads before
// it are written whole.
func TestImportFileChangedWhileRead(t *testing.T) {
	ctx := context.Background()
	file := bigFile(t, 3, 16)
	for name, change := range map[string]func([]byte) []byte{
		"value":     func(b []byte) []byte { return bytes.Replace(b, []byte(`"1 abcde`), []byte(`"1 ABCDE`), 1) },
		"truncated": func(b []byte) []byte { return b[:bytes.Index(b, []byte(`"thread-0001"`))] },
		"grown":     func(b []byte) []byte { return append(cloneBytes(b), b[:bytes.IndexByte(b, '\n')+1]...) },
	} {
		t.Run(name, func(t *testing.T) {
			for sname, newSaver := range savers() {
				if sname == "postgres" {
					continue
				}
				dst := newSaver(t)
				cf := &changingFile{first: file, second: change(cloneBytes(file)), r: bytes.NewReader(file)}
				_, err := threadfile.Import(ctx, cf, dst, threadfile.ImportOptions{})
				if !cf.rewound {
					t.Skipf("%s: the file was not read twice", sname)
				}
				if !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "changed") {
					t.Fatalf("%s: %v, want ErrInvalidFile saying the file changed", sname, err)
				}
				if name != "value" {
					continue
				}
				for i, want := range []bool{true, false, false} {
					tp, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("thread-%04d", i)})
					if err != nil || (tp != nil) != want {
						t.Errorf("%s: thread %d written %v (%v), want %v", sname, i, tp != nil, err, want)
					}
				}
			}
		})
	}
}

func cloneBytes(b []byte) []byte { return append([]byte(nil), b...) }

// plainSaver hides every optional interface of a saver: Import writes
// through it line by line.
type plainSaver struct{ checkpointer.Saver }

// TestImportLineByLineFromFile: a saver that cannot import a thread as one
// unit gets the lines as checked (held as text, not read again: a file
// changed meanwhile could not be caught before its lines were written),
// and every checkpoint arrives.
func TestImportLineByLineFromFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, bigFile(t, 4, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst := savers()["memory"](t)
	st, err := threadfile.Import(ctx, f, plainSaver{dst}, threadfile.ImportOptions{IntVersions: true})
	if err != nil || st.Imported != 12 || st.Note == "" || len(st.Threads) != 4 {
		t.Fatalf("line by line: %+v, %v", st, err)
	}
	for i := range 4 {
		n := 0
		for _, err := range dst.List(ctx, &checkpointer.Config{ThreadID: fmt.Sprintf("thread-%04d", i)}, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 3 {
			t.Errorf("thread %d: %d checkpoints, want 3", i, n)
		}
	}
}
