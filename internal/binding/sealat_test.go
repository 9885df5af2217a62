package binding_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// TestSealAtBindsAsSeal: SealAt, which builds a location's associated
// data in a reused buffer without boxing the location, seals a value
// that opens at its location and nowhere else, as Seal's does — with
// seals of other locations (longer associated data) in between, and
// under per-subject keys too (where it goes through SealFenced). With a
// plaintext codec it writes what the serializer writes.
func TestSealAtBindsAsSeal(t *testing.T) {
	ctx := context.Background()
	blob := binding.Blob{Thread: "t", NS: "", Channel: "c", Version: "1"}
	write := binding.Write{Thread: "t", NS: "ns", Checkpoint: "1f0c0000-0000-6000-8000-000000000001", Task: "a-much-longer-task-id", Idx: 2, Channel: "c"}
	item := binding.Item{Namespace: "users.alice", Key: "prefs"}
	other := binding.Blob{Thread: "t", NS: "", Channel: "c", Version: "2"}
	for name, c := range map[string]binding.Codec{"encrypted": encrypted(t), "subjects": binding.New(testkeys.Subjects(t))} {
		type sealed struct {
			at        binding.Location
			typ, want string
			data      []byte
		}
		var all []sealed
		seal := func(at binding.Location, typ string, data []byte, err error, want string) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			all = append(all, sealed{at, typ, want, data})
		}
		typ, data, err := binding.SealAt(ctx, c, blob, "blob value", nil)
		seal(blob, typ, data, err, "blob value")
		typ, data, err = binding.SealAt(ctx, c, write, "write value", nil)
		seal(write, typ, data, err, "write value")
		typ, data, err = binding.SealAt(ctx, c, item, "item value", nil)
		seal(item, typ, data, err, "item value")
		for _, s := range all {
			if v, err := c.Open(ctx, s.at, s.typ, s.data); err != nil || v != s.want {
				t.Fatalf("%s: %T opened as %v, %v; want %q", name, s.at, v, err, s.want)
			}
		}
		if _, err := c.Open(ctx, other, all[0].typ, all[0].data); !errors.Is(err, serde.ErrDecrypt) {
			t.Fatalf("%s: opened at another version: %v, want serde.ErrDecrypt", name, err)
		}
	}
	plain := binding.New(serde.JSONPlus{})
	typ, data, err := binding.SealAt(ctx, plain, blob, map[string]any{"a": "b"}, nil)
	if err != nil || typ != serde.TypeJSON || string(data) != `{"a":"b"}` {
		t.Fatalf("plaintext: %q %s %v", typ, data, err)
	}
}
