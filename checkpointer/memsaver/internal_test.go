package memsaver

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
)

// mustNewSaver returns New(opt) or fails the test.
func mustNewSaver(t testing.TB, opt Options) *InMemorySaver {
	t.Helper()
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func encrypted(t *testing.T) *serde.Encrypted {
	t.Helper()
	key, err := crypto.NewKey([]byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestStoredShape checks what is kept: serialized (type, bytes) blobs per
// (channel, version), "empty" for versions without a value, and serialized
// writes keyed by (task, idx) with the task path.
func TestStoredShape(t *testing.T) {
	s := mustNewSaver(t, Options{})
	ctx := t.Context()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": map[string]any{"k": 1}, "b": []byte("x")}, ChannelVersions: map[string]string{"a": "1", "b": "1", "c": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, map[string]string{"a": "1", "b": "1", "c": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: checkpointer.ChannelError, Value: "e"}, {Channel: "x", Value: 1}}, "task", "path"); err != nil {
		t.Fatal(err)
	}
	n := s.st.threads["t"][""]
	for ch, typ := range map[string]string{"a": serde.TypeJSON, "b": serde.TypeBytes, "c": serde.TypeEmpty} {
		if b := n.blobs[chanVersion{ch, "1"}]; b.typ != typ {
			t.Errorf("blob %s has type %q, want %q", ch, b.typ, typ)
		}
	}
	if string(n.blobs[chanVersion{"a", "1"}].data) != `{"k":1}` {
		t.Errorf("blob a = %s", n.blobs[chanVersion{"a", "1"}].data)
	}
	rec := n.checkpoints[cp.ID]
	if rec == nil || rec.parent != "" || rec.versions["a"] != "1" {
		t.Fatalf("record %+v", rec)
	}
	ws := n.writes[cp.ID]
	if w := ws[taskIdx{"task", -1}]; w == nil || w.channel != checkpointer.ChannelError || w.path != "path" {
		t.Fatalf("error write %+v", w)
	}
	if w := ws[taskIdx{"task", 1}]; w == nil || w.channel != "x" {
		t.Fatalf("write 1 %+v", w)
	}
}

// TestEncryptedValuesAreBoundToTheirLocation moves ciphertexts inside the
// saver's storage and checks that loading them fails: the saver passes
// the associated data of internal/binding to the serializer.
func TestEncryptedValuesAreBoundToTheirLocation(t *testing.T) {
	s := mustNewSaver(t, Options{Serde: encrypted(t)})
	ctx := t.Context()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "secret a", "b": "secret b"}, ChannelVersions: map[string]string{"a": "1", "b": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, map[string]string{"a": "1", "b": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "x", Value: "w0"}, {Channel: "x", Value: "w1"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	tp, err := s.GetTuple(ctx, cfg)
	if err != nil || tp.Checkpoint.ChannelValues["a"] != "secret a" || len(tp.PendingWrites) != 2 {
		t.Fatalf("GetTuple = %+v, %v", tp, err)
	}
	n := s.st.threads["t"][""]
	for _, b := range n.blobs {
		if !strings.Contains(b.typ, "+") {
			t.Fatalf("blob type %q is not encrypted", b.typ)
		}
		if strings.Contains(string(b.data), "secret") {
			t.Fatal("plaintext in a stored blob")
		}
	}

	// Swap the ciphertexts of channels a and b.
	ka, kb := chanVersion{"a", "1"}, chanVersion{"b", "1"}
	n.blobs[ka], n.blobs[kb] = n.blobs[kb], n.blobs[ka]
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("GetTuple with swapped channel blobs = %v, want ErrDecrypt", err)
	}
	n.blobs[ka], n.blobs[kb] = n.blobs[kb], n.blobs[ka]

	// Swap two writes' positions.
	ws := n.writes[cp.ID]
	k0, k1 := taskIdx{"task", 0}, taskIdx{"task", 1}
	w0, w1 := *ws[k0], *ws[k1]
	w0.value, w1.value = w1.value, w0.value
	ws[k0], ws[k1] = &w0, &w1
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("GetTuple with swapped writes = %v, want ErrDecrypt", err)
	}
	for _, err := range s.List(ctx, nil, checkpointer.ListOptions{}) {
		if !errors.Is(err, serde.ErrDecrypt) {
			t.Fatalf("List with swapped writes = %v, want ErrDecrypt", err)
		}
	}

	// Move the whole namespace to another thread: nothing decrypts.
	s.st.threads["t"][""] = nil
	w0.value, w1.value = w1.value, w0.value
	s.st.threads["u"] = map[string]*namespace{"": n}
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "u"}); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("GetTuple of a moved thread = %v, want ErrDecrypt", err)
	}
}

// TestCopyThreadRebindsCiphertexts checks that CopyThread re-encrypts under
// the destination's associated data (plain copies would not decrypt).
func TestCopyThreadRebindsCiphertexts(t *testing.T) {
	s := mustNewSaver(t, Options{Serde: encrypted(t)})
	ctx := t.Context()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "v"}, ChannelVersions: map[string]string{"a": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "src", CheckpointNS: "ns"}, cp, nil, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "x", Value: "w"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	src, dst := s.st.threads["src"]["ns"], s.st.threads["dst"]["ns"]
	if string(src.blobs[chanVersion{"a", "1"}].data) == string(dst.blobs[chanVersion{"a", "1"}].data) {
		t.Fatal("copied blob has the source's ciphertext")
	}
	tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "dst", CheckpointNS: "ns"})
	if err != nil || tp.Checkpoint.ChannelValues["a"] != "v" || len(tp.PendingWrites) != 1 || tp.PendingWrites[0].Value != "w" {
		t.Fatalf("copy = %+v, %v", tp, err)
	}
}

func TestPruneCollectsUnreferencedBlobs(t *testing.T) {
	s := mustNewSaver(t, Options{VersionStyle: checkpointer.VersionInt})
	ctx := t.Context()
	cfg := checkpointer.Config{ThreadID: "t"}
	var err error
	for i := range 5 {
		v := s.NextVersion(strconv.Itoa(i))
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"c": i, "base": "b"}, ChannelVersions: map[string]string{"c": v, "base": "1"}}
		nv := map[string]string{"c": v}
		if i == 0 {
			nv["base"] = "1"
		}
		if cfg, err = s.Put(ctx, cfg, cp, nil, nv); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.st.threads["t"][""].blobs); n != 6 {
		t.Fatalf("%d blobs before prune, want 6", n)
	}
	if err := s.Prune(ctx, []string{"t"}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	n := s.st.threads["t"][""]
	if len(n.blobs) != 2 || len(n.checkpoints) != 1 {
		t.Fatalf("after prune: %d blobs, %d checkpoints; want 2 and 1", len(n.blobs), len(n.checkpoints))
	}
	if err := s.Prune(ctx, []string{"t"}, checkpointer.PruneStrategy(9)); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}

// TestUpdateRollsBackOnPanic: a transaction whose function panics leaves
// nothing it changed behind (the panic goes on to the caller).
func TestUpdateRollsBackOnPanic(t *testing.T) {
	s := mustNewSaver(t, Options{})
	ctx := t.Context()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": 1}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		_ = s.st.Update(ctx, func(tx checkpointer.DriverTx) error {
			if _, err := tx.DeleteThreads(ctx, []string{"t"}, false); err != nil {
				return err
			}
			panic("in the middle")
		})
	}()
	got, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
	if err != nil || got == nil || got.Checkpoint.ID != cp.ID {
		t.Fatalf("after a panicking transaction: %+v, %v; want the checkpoint back", got, err)
	}
}
