package checkpointertest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// RunReencrypt checks key rotation on a backend: open must return a saver
// on the same storage every time it is called (a file, a schema), using the
// given serializer. The saver must implement checkpointer.Reencrypter.
//
// It writes checkpoints and pending writes under key A, rotates to key B
// (A kept for decryption), checks a dry run changes nothing, re-encrypts,
// checks a second run finds nothing left, and that afterwards key B alone
// reads everything while key A alone fails with serde.ErrDecrypt.
func RunReencrypt(t *testing.T, open func(t *testing.T, s serde.Serializer) checkpointer.Saver) {
	t.Helper()
	ctx := context.Background()
	keyA, keyB := testKey(t, "A"), testKey(t, "B")
	enc := func(primary *crypto.Key, previous ...*crypto.Key) serde.Serializer {
		ring, err := crypto.NewKeyring(primary, previous...)
		if err != nil {
			t.Fatal(err)
		}
		s, err := serde.NewEncrypted(serde.JSONPlus{}, ring)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	saver := open(t, enc(keyA))
	if _, ok := saver.(checkpointer.Reencrypter); !ok {
		t.Fatalf("%T does not implement checkpointer.Reencrypter", saver)
	}
	const threads, steps = 3, 4
	want := map[string]*checkpointer.Tuple{}
	for th := 0; th < threads; th++ {
		cfg := checkpointer.Config{ThreadID: fmt.Sprintf("rotate-%d", th)}
		for i := 0; i < steps; i++ {
			ver := fmt.Sprint(i + 1)
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i),
				ChannelValues:   map[string]any{"messages": []any{fmt.Sprintf("m%d", i)}, "n": int64(i)},
				ChannelVersions: map[string]string{"messages": ver, "n": ver},
				VersionsSeen:    map[string]map[string]string{}}
			next, err := saver.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, map[string]string{"messages": ver, "n": ver})
			if err != nil {
				t.Fatal(err)
			}
			if err := saver.PutWrites(ctx, next, []checkpointer.Write{{Channel: "out", Value: map[string]any{"i": int64(i)}}, {Channel: checkpointer.ChannelInterrupt, Value: "wait"}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			cfg = next
		}
		tup, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: cfg.ThreadID})
		if err != nil || tup == nil {
			t.Fatalf("GetTuple: %v, %v", tup, err)
		}
		want[cfg.ThreadID] = tup
	}
	const values = threads * steps * (2 + 2) // 2 channels + 2 writes per step
	closeSaver(t, saver)

	rotated := open(t, enc(keyB, keyA))
	re := rotated.(checkpointer.Reencrypter)
	var progressed int64
	dry, err := re.Reencrypt(ctx, reencrypt.Options{DryRun: true, BatchSize: 5, Progress: func(done, total int64) {
		if done > total {
			t.Errorf("progress %d of %d", done, total)
		}
		progressed = done
	}})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Scanned != values || dry.Rewritten != values || progressed != values {
		t.Fatalf("dry run = %+v (progress %d), want %d scanned and to rewrite", dry, progressed, values)
	}
	st, err := re.Reencrypt(ctx, reencrypt.Options{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rewritten != values {
		t.Fatalf("Reencrypt = %+v, want %d rewritten (the dry run must not have written)", st, values)
	}
	again, err := re.Reencrypt(ctx, reencrypt.Options{})
	if err != nil || again.Rewritten != 0 || again.Scanned != values {
		t.Fatalf("second Reencrypt = %+v, %v; want nothing left", again, err)
	}
	closeSaver(t, rotated)

	onlyB := open(t, enc(keyB))
	for thread, w := range want {
		got, err := onlyB.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil {
			t.Fatalf("key B alone: %v", err)
		}
		if !Equal(w.Checkpoint.ChannelValues, got.Checkpoint.ChannelValues) || !Equal(writesOf(w), writesOf(got)) {
			t.Fatalf("thread %s after rotation:\n got %v %v\nwant %v %v", thread, got.Checkpoint.ChannelValues, got.PendingWrites, w.Checkpoint.ChannelValues, w.PendingWrites)
		}
	}
	closeSaver(t, onlyB)

	onlyA := open(t, enc(keyA))
	if _, err := onlyA.GetTuple(ctx, checkpointer.Config{ThreadID: "rotate-0"}); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("retired key A: err = %v, want serde.ErrDecrypt", err)
	}
	closeSaver(t, onlyA)
}

func writesOf(t *checkpointer.Tuple) []any {
	var out []any
	for _, w := range t.PendingWrites {
		out = append(out, []any{w.TaskID, w.Channel, w.Value})
	}
	return out
}

func testKey(t *testing.T, seed string) *crypto.Key {
	t.Helper()
	b := make([]byte, 32)
	for i := range b {
		b[i] = seed[0] + byte(i)
	}
	k, err := crypto.NewKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func closeSaver(t *testing.T, s checkpointer.Saver) {
	t.Helper()
	if c, ok := s.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
