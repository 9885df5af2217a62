package keys_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
)

// Each user's threads ("<user>:<thread>") are sealed under the user's own
// data key; destroying it erases the user's data wherever copies of it
// are, while everyone else's still reads.
func Example() {
	ctx := context.Background()
	master, _ := crypto.ParseKey("base64:q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=") // LANGGRAPH_AES_KEY
	ring, _ := crypto.NewKeyring(master)
	enc, _ := serde.NewEncrypted(nil, ring)
	h, err := keys.New(keys.Options{
		Master:   enc,
		Table:    memkeys.New(), // keys/sqlitekeys or keys/pgkeys, apart from the data, in production
		Subjects: keys.Subjects{ThreadSeparator: ":"},
	})
	if err != nil {
		panic(err)
	}
	saver, err := memsaver.New(memsaver.Options{Serde: h})
	if err != nil {
		panic(err)
	}
	for _, thread := range []string{"carol:visit-1", "dave:visit-1"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "private"}, ChannelVersions: map[string]string{"notes": "1"}}
		if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
			panic(err)
		}
	}

	receipt, _ := h.DestroyKeys(ctx, "carol")
	_, errCarol := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:visit-1"})
	dave, _ := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:visit-1"})
	fmt.Println(errors.Is(errCarol, serde.ErrDecrypt), dave.Checkpoint.ChannelValues["notes"], len(receipt.KeyIDs), h.VerifyReceipt(receipt))
	// Output: true private 1 true
}
