package durable_test

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// In Exit mode a run's steps stay queued until something needs them: the
// inner saver holds nothing until Flush, which stores the steps in as few
// transactions as MaxBatch allows. A read through the decorator would
// flush the thread first, so it always sees every queued step.
func Example() {
	ctx := context.Background()
	inner, err := memsaver.New(memsaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	saver, err := durable.New(inner, durable.Options{Mode: durable.Exit})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer saver.Close()

	cfg := checkpointer.Config{ThreadID: "run-1"}
	v := ""
	for step := -1; step < 2; step++ {
		v = saver.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step),
			ChannelValues:   map[string]any{"step": step},
			ChannelVersions: map[string]string{"step": v}}
		if cfg, err = saver.Put(ctx, cfg, cp, checkpointer.Metadata{"step": step}, cp.ChannelVersions); err != nil {
			fmt.Println(err)
			return
		}
	}
	stored := func() int {
		n := 0
		for _, err := range inner.List(ctx, &checkpointer.Config{ThreadID: "run-1"}, checkpointer.ListOptions{}) {
			if err != nil {
				fmt.Println(err)
			}
			n++
		}
		return n
	}
	fmt.Println("stored before Flush:", stored())
	fmt.Println(saver.Flush(ctx))
	fmt.Println("stored after Flush:", stored())
	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "run-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(latest.Metadata["step"])
	// Output:
	// stored before Flush: 0
	// <nil>
	// stored after Flush: 3
	// 1
}
