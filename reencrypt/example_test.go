package reencrypt_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// A key rotation's last step, on a saver (a store takes the same Options
// and reports the same Stats): a dry run first, then the run. Here every
// value is already under the primary key, so nothing is rewritten.
func Example() {
	ctx := context.Background()
	key, _ := crypto.ParseKey("0123456789abcdef0123456789abcdef")
	ring, _ := crypto.NewKeyring(key)
	sealed, _ := serde.NewEncrypted(nil, ring)
	saver, _ := memsaver.New(memsaver.Options{Serde: sealed})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues: map[string]any{"notes": "alice"}, ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions); err != nil {
		fmt.Println(err)
		return
	}

	var r checkpointer.Reencrypter = saver
	for _, dry := range []bool{true, false} {
		st, err := r.Reencrypt(ctx, reencrypt.Options{DryRun: dry, BatchSize: 100})
		if errors.Is(err, reencrypt.ErrCompactPending) {
			fmt.Println("resealed; run again once no other process reads the file")
			return
		}
		fmt.Printf("dry run %v: scanned %d, rewritten %d, err %v\n", dry, st.Scanned, st.Rewritten, err)
	}
	// Output:
	// dry run true: scanned 1, rewritten 0, err <nil>
	// dry run false: scanned 1, rewritten 0, err <nil>
}
