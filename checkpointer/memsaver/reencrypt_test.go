package memsaver

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

func keyring(t *testing.T, keys ...string) *crypto.Keyring {
	t.Helper()
	ks := make([]*crypto.Key, len(keys))
	for i, k := range keys {
		var err error
		if ks[i], err = crypto.NewKey([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := crypto.NewKeyring(ks[0], ks[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newEnc(t *testing.T, r *crypto.Keyring, opts ...serde.EncryptedOption) *serde.Encrypted {
	t.Helper()
	e, err := serde.NewEncrypted(nil, r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fillForRotation stores 3 checkpoints (4 values: 3 steps of "c" and one
// "base") and 2 writes, and returns the latest config.
func fillForRotation(t *testing.T, s *InMemorySaver) checkpointer.Config {
	t.Helper()
	cfg := checkpointer.Config{ThreadID: "t", CheckpointNS: "ns"}
	for i := range 3 {
		v := s.NextVersion(map[int]string{0: "", 1: "1", 2: "2"}[i])
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"c": i, "base": "b"}, ChannelVersions: map[string]string{"c": v, "base": "1"}}
		nv := map[string]string{"c": v}
		if i == 0 {
			nv["base"] = "1"
		}
		var err error
		if cfg, err = s.Put(t.Context(), cfg, cp, nil, nv); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutWrites(t.Context(), cfg, []checkpointer.Write{{Channel: "w", Value: "x"}, {Channel: "w", Value: []byte("y")}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func checkReadable(t *testing.T, s *InMemorySaver, cfg checkpointer.Config) {
	t.Helper()
	tp, err := s.GetTuple(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Checkpoint.ChannelValues["base"] != "b" || len(tp.PendingWrites) != 2 || tp.PendingWrites[0].Value != "x" {
		t.Fatalf("tuple after rotation: %+v", tp)
	}
}

func TestReencryptRotatesKeys(t *testing.T) {
	old := keyring(t, "old-key-0123456789abcdef")
	s := mustNewSaver(t, Options{Serde: newEnc(t, old), VersionStyle: checkpointer.VersionInt})
	cfg := fillForRotation(t, s)

	// Restart with a new primary key, the old one kept for reading.
	s = s.WithSerde(newEnc(t, keyring(t, "new-key-0123456789abcdef", "old-key-0123456789abcdef")))
	var progress [][2]int64
	stats, err := s.Reencrypt(t.Context(), reencrypt.Options{DryRun: true, BatchSize: 2})
	if err != nil || stats != (reencrypt.Stats{Scanned: 6, Rewritten: 6}) {
		t.Fatalf("dry run = %+v, %v; want 6 scanned, 6 to rewrite", stats, err)
	}
	stats, err = s.Reencrypt(t.Context(), reencrypt.Options{BatchSize: 4, Progress: func(a, b int64) { progress = append(progress, [2]int64{a, b}) }})
	if err != nil || stats != (reencrypt.Stats{Scanned: 6, Rewritten: 6}) {
		t.Fatalf("Reencrypt = %+v, %v; want 6 scanned and rewritten", stats, err)
	}
	// Two passes (the second proves nothing under the old key was written
	// meanwhile), each reporting per batch of 4; the second adds its rows
	// to the total.
	if want := [][2]int64{{4, 6}, {6, 6}, {10, 12}, {12, 12}}; !slices.Equal(progress, want) {
		t.Fatalf("progress calls %v, want %v", progress, want)
	}
	stats, err = s.Reencrypt(t.Context(), reencrypt.Options{})
	if err != nil || stats.Rewritten != 0 {
		t.Fatalf("second run = %+v, %v; want nothing rewritten", stats, err)
	}
	// Readable without the old key now.
	s = s.WithSerde(newEnc(t, keyring(t, "new-key-0123456789abcdef")))
	checkReadable(t, s, cfg)
}

func TestReencryptPlaintextDatabase(t *testing.T) {
	s := mustNewSaver(t, Options{})
	cfg := fillForRotation(t, s)
	s = s.WithSerde(newEnc(t, keyring(t, "key-0123456789ab"), serde.WithDangerousPlaintextReads()))
	stats, err := s.Reencrypt(t.Context(), reencrypt.Options{})
	if err != nil || stats.Rewritten != 6 {
		t.Fatalf("Reencrypt = %+v, %v", stats, err)
	}
	s = s.WithSerde(newEnc(t, keyring(t, "key-0123456789ab"))) // strict
	checkReadable(t, s, cfg)
}

func TestReencryptErrors(t *testing.T) {
	s := mustNewSaver(t, Options{})
	fillForRotation(t, s)
	if _, err := s.Reencrypt(t.Context(), reencrypt.Options{}); !errors.Is(err, reencrypt.ErrNotEncrypted) {
		t.Fatalf("Reencrypt with JSONPlus = %v, want reencrypt.ErrNotEncrypted", err)
	}
	// Strict encryption refuses the plaintext rows: the run stops, nothing lost.
	s = s.WithSerde(newEnc(t, keyring(t, "key-0123456789ab")))
	if _, err := s.Reencrypt(t.Context(), reencrypt.Options{}); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Fatalf("strict Reencrypt of plaintext = %v, want ErrPlaintextRefused", err)
	}
	// A key that is not in the ring: ErrDecrypt.
	e := mustNewSaver(t, Options{Serde: newEnc(t, keyring(t, "key-A-0123456789"))})
	fillForRotation(t, e)
	e = e.WithSerde(newEnc(t, keyring(t, "key-B-0123456789")))
	if _, err := e.Reencrypt(t.Context(), reencrypt.Options{}); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("Reencrypt with a foreign key = %v, want ErrDecrypt", err)
	}
	ctx, cancel := contextCancelled(t)
	defer cancel()
	if _, err := e.Reencrypt(ctx, reencrypt.Options{}); err == nil {
		t.Fatal("Reencrypt with a cancelled context succeeded")
	}
}

func contextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

// Pending writes of a thread that holds no checkpoint (a copy keeps them,
// and so does an interrupted run's thread) are resealed too: a rotation
// that listed only threads with checkpoints left them under the old key.
func TestReencryptReachesWritesWithoutCheckpoint(t *testing.T) {
	old := keyring(t, "old-key-0123456789abcdef")
	s := mustNewSaver(t, Options{Serde: newEnc(t, old)})
	orphan := checkpointer.Config{ThreadID: "orphan", CheckpointID: checkpointer.NewID(7)}
	if err := s.PutWrites(t.Context(), orphan, []checkpointer.Write{{Channel: "w", Value: "z"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	fillForRotation(t, s)
	s = s.WithSerde(newEnc(t, keyring(t, "new-key-0123456789abcdef", "old-key-0123456789abcdef")))
	stats, err := s.Reencrypt(t.Context(), reencrypt.Options{})
	if err != nil || stats != (reencrypt.Stats{Scanned: 7, Rewritten: 7}) {
		t.Fatalf("Reencrypt = %+v, %v; want the 6 values of thread t and the orphan write", stats, err)
	}
	again, err := s.Reencrypt(t.Context(), reencrypt.Options{DryRun: true})
	if err != nil || again.Rewritten != 0 {
		t.Fatalf("dry run after = %+v, %v; want nothing under the old key", again, err)
	}
}

// A write that lands while a run is under way wins: the run read the row
// (and sealed it again) before the write, so it stores its copy only where
// the row still holds what it read. Here the run reads the thread's rows
// with its first batch (one row per batch), the interrupt is written again
// under the new key from Progress after that batch, and the run reaches
// the interrupt's row afterwards: without the compare and swap it would
// put the old interrupt back.
func TestReencryptLeavesAWriteMadeDuringTheRun(t *testing.T) {
	ctx := t.Context()
	s := mustNewSaver(t, Options{Serde: newEnc(t, keyring(t, "old-key-0123456789abcdef"))})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"c": "v"}, ChannelVersions: map[string]string{"c": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, map[string]string{"c": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: checkpointer.ChannelInterrupt, Value: "old"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	s = s.WithSerde(newEnc(t, keyring(t, "new-key-0123456789abcdef", "old-key-0123456789abcdef")))
	written := false
	_, err = s.Reencrypt(ctx, reencrypt.Options{BatchSize: 1, Progress: func(done, _ int64) {
		if done == 1 && !written {
			written = true
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: checkpointer.ChannelInterrupt, Value: "new"}}, "task", ""); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil || !written {
		t.Fatalf("Reencrypt = %v (written during the run: %v)", err, written)
	}
	s = s.WithSerde(newEnc(t, keyring(t, "new-key-0123456789abcdef"))) // the old key retired
	tp, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.PendingWrites) != 1 || tp.PendingWrites[0].Value != "new" {
		t.Fatalf("pending writes after the run: %+v, want the interrupt written during it", tp.PendingWrites)
	}
}
