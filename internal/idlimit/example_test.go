package idlimit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// The checkpointer and the store refuse the same identifiers: MaxBytes
// bytes pass, one more byte fails a write with each contract's
// ErrIDTooLong, before any storage is touched (reads check no length, so
// that ids stored before the limit stay readable). The limit counts bytes, so 256 two-byte
// characters are already the limit.
func Example() {
	ctx := context.Background()
	st, err := memstore.New(memstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	saver, err := memsaver.New(memsaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	ns := store.Namespace{"docs"}
	atLimit := strings.Repeat("é", idlimit.MaxBytes/2) // 2 bytes each
	fmt.Println(st.Put(ctx, ns, atLimit, map[string]any{"v": 1}))
	err = st.Put(ctx, ns, atLimit+"x", map[string]any{"v": 1})
	fmt.Println(errors.Is(err, store.ErrIDTooLong))

	put := func(thread string) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
		_, err := saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": 0}, nil)
		return err
	}
	fmt.Println(put(strings.Repeat("t", idlimit.MaxBytes)))
	err = put(strings.Repeat("t", idlimit.MaxBytes+1))
	fmt.Println(errors.Is(err, checkpointer.ErrIDTooLong))
	// Output:
	// <nil>
	// true
	// <nil>
	// true
}
