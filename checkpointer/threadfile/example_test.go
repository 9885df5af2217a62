package threadfile_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/threadfile"
)

// Example copies a thread from one saver to another through a thread file.
func Example() {
	ctx := context.Background()
	src, err := memsaver.New(memsaver.Options{})
	if err != nil {
		panic(err)
	}
	dst, err := memsaver.New(memsaver.Options{})
	if err != nil {
		panic(err)
	}
	v := src.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"n": int64(1)},
		ChannelVersions: map[string]string{"n": v}, VersionsSeen: map[string]map[string]string{}}
	if _, err := src.Put(ctx, checkpointer.Config{ThreadID: "t-1"}, cp, checkpointer.Metadata{"step": 0}, map[string]string{"n": v}); err != nil {
		panic(err)
	}
	var file bytes.Buffer
	n, err := threadfile.Export(ctx, &file, src, "t-1")
	if err != nil {
		panic(err)
	}
	st, err := threadfile.Import(ctx, &file, dst, threadfile.ImportOptions{})
	if err != nil {
		panic(err)
	}
	got, _ := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "t-1"})
	fmt.Println(n, st.Imported, got.Checkpoint.ChannelValues["n"])
	// Output: 1 1 1
}
