package binding_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// kinds is every kind of stored ciphertext, each at a sample location with
// every coordinate set to something distinct.
var kinds = []binding.Location{
	binding.Blob{Thread: "thread", NS: "ns", Channel: "channel", Version: "00000000000000000000000000000001.0.5"},
	binding.Write{Thread: "thread", NS: "ns", Checkpoint: "1f0c0000-0000-6000-8000-000000000001", Task: "task", Idx: 3, Channel: "channel"},
	binding.Item{Namespace: "users.alice", Key: "prefs"},
}

func encrypted(t testing.TB) binding.Codec {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return binding.New(e)
}

// TestEveryCoordinateIsBound: for every kind and every one of its
// coordinates, a value sealed at a location does not open at the location
// that differs in that coordinate alone (one generic serde.ErrDecrypt), and
// Move makes it open there.
func TestEveryCoordinateIsBound(t *testing.T) {
	c := encrypted(t)
	for _, at := range kinds {
		rv := reflect.ValueOf(at)
		for i := range rv.NumField() {
			field := rv.Type().Field(i).Name
			t.Run(rv.Type().Name()+"."+field, func(t *testing.T) {
				moved := reflect.New(rv.Type()).Elem()
				moved.Set(rv)
				switch f := moved.Field(i); f.Kind() {
				case reflect.String:
					f.SetString(f.String() + "x")
				case reflect.Int:
					f.SetInt(f.Int() + 1)
				default:
					t.Fatalf("coordinate %s of kind %s: extend this test", field, f.Kind())
				}
				to := moved.Interface().(binding.Location)
				typ, data, err := c.Seal(context.Background(), at, "secret")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Open(context.Background(), to, typ, data); !errors.Is(err, serde.ErrDecrypt) {
					t.Fatalf("opened at a location with another %s: %v, want serde.ErrDecrypt", field, err)
				}
				mt, md, err := c.Move(context.Background(), at, to, typ, data)
				if err != nil {
					t.Fatal(err)
				}
				if v, err := c.Open(context.Background(), to, mt, md); err != nil || v != "secret" {
					t.Fatalf("after Move: %v, %v", v, err)
				}
				if _, err := c.Open(context.Background(), at, mt, md); !errors.Is(err, serde.ErrDecrypt) {
					t.Fatalf("moved value still opens at its old location: %v", err)
				}
			})
		}
	}
}

// TestAADMatchesGoldenFile pins the bytes: the associated data of the
// golden encrypted rows (serde/testdata/encrypted/rows.json) is what
// binding builds for their locations, so rows written by earlier versions
// keep opening.
func TestAADMatchesGoldenFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "serde", "testdata", "encrypted", "rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Name string `json:"name"`
		AAD  string `json:"aad_hex"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	want := map[string]binding.Location{
		"envelope v1 json":    binding.Blob{Thread: "thread-1", Channel: "messages", Version: "00000000000000000000000000000002.0.1"},
		"envelope v1 msgpack": binding.Item{Namespace: "users.alice", Key: "prefs"},
	}
	for _, r := range rows {
		at, ok := want[r.Name]
		if !ok {
			continue
		}
		delete(want, r.Name)
		if got := hex.EncodeToString(binding.AAD(at)); got != r.AAD {
			t.Errorf("%s: AAD %s, golden file has %s", r.Name, got, r.AAD)
		}
	}
	if len(want) > 0 {
		t.Fatalf("golden rows missing: %v", want)
	}
	// No golden row holds a pending write: its bytes are pinned here (the
	// layout of serde.WriteAAD before it moved to this package).
	w := binding.Write{Thread: "t", NS: "ns", Checkpoint: "cp", Task: "task", Idx: -3, Channel: "ch"}
	const wantWrite = "6d656d7661756c742f77726974652f7631000174026e73026370047461736b0105026368"
	if got := hex.EncodeToString(binding.AAD(w)); got != wantWrite {
		t.Fatalf("write AAD %s, want %s", got, wantWrite)
	}
}

func TestAADInjective(t *testing.T) {
	seen := map[string]string{}
	for name, at := range map[string]binding.Location{
		"blob a|bc":           binding.Blob{Thread: "a", NS: "bc", Channel: "c", Version: "1"},
		"blob ab|c":           binding.Blob{Thread: "ab", NS: "c", Channel: "c", Version: "1"},
		"blob other version":  binding.Blob{Thread: "a", NS: "bc", Channel: "c", Version: "2"},
		"write idx 0":         binding.Write{Thread: "t", Checkpoint: "cp", Task: "task", Idx: 0, Channel: "ch"},
		"write idx -1":        binding.Write{Thread: "t", Checkpoint: "cp", Task: "task", Idx: -1, Channel: "ch"},
		"write idx 1":         binding.Write{Thread: "t", Checkpoint: "cp", Task: "task", Idx: 1, Channel: "ch"},
		"write other channel": binding.Write{Thread: "t", Checkpoint: "cp", Task: "task", Idx: 0, Channel: "other"},
		"item a.b|c":          binding.Item{Namespace: "a.b", Key: "c"},
		"item a|b.c":          binding.Item{Namespace: "a", Key: "b.c"},
		"item ab|":            binding.Item{Namespace: "ab"},
		"blob same fields":    binding.Blob{Thread: "a.b", NS: "c"},
	} {
		b := string(binding.AAD(at))
		if prev, dup := seen[b]; dup {
			t.Fatalf("%s and %s have the same associated data", name, prev)
		}
		seen[b] = name
	}
}

func TestAppendAADKeepsPrefix(t *testing.T) {
	for _, at := range kinds {
		if got := at.AppendAAD([]byte("kept")); string(got) != "kept"+string(binding.AAD(at)) {
			t.Fatalf("%T: AppendAAD = %q", at, got)
		}
	}
}

// TestPlainCodecIsUnbound: without an encrypting serializer values are not
// bound, and Move copies their bytes.
func TestPlainCodecIsUnbound(t *testing.T) {
	c := binding.New(serde.JSONPlus{})
	if c.Bound() {
		t.Fatal("JSONPlus codec reports bound")
	}
	typ, data, err := c.Seal(context.Background(), kinds[0], map[string]any{"a": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	mt, md, err := c.Move(context.Background(), kinds[0], kinds[1], typ, data)
	if err != nil || mt != typ || string(md) != string(data) {
		t.Fatalf("Move of plaintext = %q %q %v", mt, md, err)
	}
}
