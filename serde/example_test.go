package serde_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/serde/pyvalue"
)

type Order struct {
	ID    int64     `json:"id"`
	Items []string  `json:"items"`
	At    time.Time `json:"at"`
}

func init() { serde.Register[Order]("shop.models.Order") }

func ExampleJSONPlus() {
	var s serde.JSONPlus
	typ, data, _ := s.DumpsTyped(map[string]any{
		"big":   int64(1) << 62,
		"bytes": []byte("hi"),
		"ids":   pyvalue.Set{"a"},
	})
	fmt.Println(typ, string(data))

	v, _ := s.LoadsTyped(typ, data)
	m := v.(map[string]any)
	fmt.Printf("%T %T %T\n", m["big"], m["bytes"], m["ids"])
	// Output:
	// json {"big":4611686018427387904,"bytes":{"lc":2,"type":"constructor","id":["Uint8Array"],"method":"from","args":[[104,105]],"kwargs":{}},"ids":{"lc":2,"type":"constructor","id":["Set"],"method":null,"args":[["a"]],"kwargs":{}}}
	// int64 []uint8 pyvalue.Set
}

func ExampleRegister() {
	var s serde.JSONPlus
	in := Order{ID: 7, Items: []string{"pen"}, At: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	typ, data, _ := s.DumpsTyped(in)
	fmt.Println(string(data))
	out, _ := s.LoadsTyped(typ, data)
	fmt.Printf("%T %v\n", out, out.(Order).At.Equal(in.At))
	// Output:
	// {"lc":2,"type":"constructor","id":["shop","models","Order"],"method":null,"args":[],"kwargs":{"at":{"lc":2,"type":"constructor","id":["datetime","datetime"],"method":"fromisoformat","args":["2024-01-02T03:04:05+00:00"],"kwargs":{}},"id":7,"items":["pen"]}}
	// serde_test.Order true
}

// A payload written by Python LangGraph: msgpack with a datetime (ext 3).
func ExampleJSONPlus_msgpack() {
	data := []byte{0x81, 0xa2, 'a', 't', 0xc7, 0x35, 0x03,
		0x94, 0xa8, 'd', 'a', 't', 'e', 't', 'i', 'm', 'e', 0xa8, 'd', 'a', 't', 'e', 't', 'i', 'm', 'e',
		0xb3, '2', '0', '2', '4', '-', '0', '1', '-', '0', '2', 'T', '0', '3', ':', '0', '4', ':', '0', '5',
		0xad, 'f', 'r', 'o', 'm', 'i', 's', 'o', 'f', 'o', 'r', 'm', 'a', 't'}
	v, err := serde.JSONPlus{}.LoadsTyped("msgpack", data)
	fmt.Println(v, err)
	// Output: map[at:2024-01-02 03:04:05 +0000 UTC] <nil>
}

func ExampleEncrypted() {
	ring, _ := crypto.KeyringFromLookup(func(name string) (string, bool) {
		if name == crypto.EnvKey {
			return "0123456789abcdef0123456789abcdef", true
		}
		return "", false
	})
	s, _ := serde.NewEncrypted(serde.JSONPlus{}, ring)

	// Associated data names where the value is stored (memvault's drivers
	// build it from the thread, namespace, channel and version).
	aad := []byte("thread-1/messages/1")
	typ, data, _ := s.DumpsTypedWith([]any{"hello"}, aad)
	v, _ := s.LoadsTypedWith(typ, data, aad)
	fmt.Println(typ, v)

	// The same bytes under another thread's associated data do not open.
	_, err := s.LoadsTypedWith(typ, data, []byte("thread-2/messages/1"))
	fmt.Println(errors.Is(err, serde.ErrDecrypt))

	// Plaintext is refused unless WithDangerousPlaintextReads is given.
	_, err = s.LoadsTyped("json", []byte(`"injected"`))
	fmt.Println(errors.Is(err, serde.ErrPlaintextRefused))
	// Output:
	// json+mvgcm [hello]
	// true
	// true
}

// For a database shared with Python LangGraph: values are written in
// LangGraph's "aes" format, which Python reads with
// EncryptedSerializer.from_pycryptodome_aes(mode=AES.MODE_GCM).
func ExampleWithDangerousLangGraphAES() {
	ring, _ := crypto.KeyringFromLookup(func(string) (string, bool) { return "0123456789abcdef0123456789abcdef", true })
	s, _ := serde.NewEncrypted(serde.MsgPack{}, ring, serde.WithDangerousLangGraphAES(crypto.ModeGCM))
	typ, data, _ := s.DumpsTyped(map[string]any{"a": 1})
	fmt.Println(typ, len(data))
	// Output: msgpack+aes 36
}
