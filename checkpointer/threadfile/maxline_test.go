package threadfile_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/threadfile"
)

// TestImportMaxLine: a line longer than ImportOptions.MaxLine (or, by
// default, DefaultMaxLine) fails the import naming the line, and nothing
// is written; a line of exactly the bound is read. Read is bounded by
// DefaultMaxLine. Before the bound, Import and Read accepted lines up to
// 1 GiB: a file that is not a thread file could make a library caller
// hold a gigabyte per line several times over.
func TestImportMaxLine(t *testing.T) {
	ctx := context.Background()
	src, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	putThread(t, src, "t", 2)
	file := export(t, src, "t")
	lines := strings.SplitAfter(strings.TrimSuffix(string(file), "\n"), "\n")
	longest := 0
	for _, l := range lines {
		longest = max(longest, len(strings.TrimSuffix(l, "\n")))
	}

	for _, tc := range []struct {
		name    string
		maxLine int
		ok      bool
	}{
		{"exactly the bound", longest, true},
		{"a byte under the longest line", longest - 1, false},
		{"default", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst, err := memsaver.New(memsaver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = threadfile.Import(ctx, bytes.NewReader(file), dst, threadfile.ImportOptions{MaxLine: tc.maxLine})
			if tc.ok {
				if err != nil {
					t.Fatalf("Import with MaxLine %d (longest line %d): %v", tc.maxLine, longest, err)
				}
				return
			}
			if !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("Import with MaxLine %d (longest line %d): %v, want ErrInvalidFile naming the line", tc.maxLine, longest, err)
			}
			if tp, err := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); err != nil || tp != nil {
				t.Fatalf("after a refused import: %v, %v; want nothing written", tp, err)
			}
		})
	}

	// The last line without its newline is bounded too.
	last := strings.TrimSuffix(lines[len(lines)-1], "\n")
	dst, _ := memsaver.New(memsaver.Options{})
	if _, err := threadfile.Import(ctx, strings.NewReader(last), dst, threadfile.ImportOptions{MaxLine: len(last) - 1}); !errors.Is(err, threadfile.ErrInvalidFile) {
		t.Fatalf("a last line a byte over the bound, without newline: %v, want ErrInvalidFile", err)
	}

	huge := strings.Repeat("x", threadfile.DefaultMaxLine+1) + "\n"
	if _, err := threadfile.Read(strings.NewReader(huge)); !errors.Is(err, threadfile.ErrInvalidFile) || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("Read of a line over DefaultMaxLine: %v, want ErrInvalidFile naming line 1", err)
	}
	for _, bad := range []int{-1, threadfile.MaxMaxLine + 1} {
		if _, err := threadfile.Import(ctx, bytes.NewReader(file), dst, threadfile.ImportOptions{MaxLine: bad}); err == nil {
			t.Fatalf("Import with MaxLine %d: nil error, want it refused", bad)
		}
	}
}
