package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestAADInjective(t *testing.T) {
	seen := map[string]string{}
	add := func(name string, b []byte) {
		if prev, dup := seen[string(b)]; dup {
			t.Fatalf("%s and %s have the same AAD", name, prev)
		}
		seen[string(b)] = name
	}
	add("blob a|bc", BlobAAD("a", "bc", "c", "1"))
	add("blob ab|c", BlobAAD("ab", "c", "c", "1"))
	add("blob other version", BlobAAD("a", "bc", "c", "2"))
	add("write idx 0", WriteAAD("t", "", "cp", "task", 0, "ch"))
	add("write idx -1", WriteAAD("t", "", "cp", "task", -1, "ch"))
	add("write idx 1", WriteAAD("t", "", "cp", "task", 1, "ch"))
	add("write other channel", WriteAAD("t", "", "cp", "task", 0, "other"))
	add("item a.b|c", ItemAAD("a.b", "c"))
	add("item a|b.c", ItemAAD("a", "b.c"))
	if !bytes.Equal(BlobAAD("t", "", "c", "v"), BlobAAD("t", "", "c", "v")) {
		t.Fatal("AAD not deterministic")
	}
}

func TestRegisterPanics(t *testing.T) {
	type other struct{ A int }
	for name, f := range map[string]func(){
		"not a struct":   func() { Register[int]("x.Int") },
		"empty name":     func() { Register[other]("") },
		"bad name":       func() { Register[other]("a..b") },
		"duplicate name": func() { Register[other]("tests.golden.Point") },
		"duplicate type": func() { Register[goldenPoint]("tests.golden.Point2") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct{ typ, data string }{
		{TypeJSON, ``},
		{TypeJSON, `{"a":`},
		{TypeJSON, `1 2`},
		{TypeJSON, `{"lc":2,"type":"constructor","id":["tests","golden","Point"],"method":null,"args":[],"kwargs":{"x":"not a number"}}`},
		{TypeJSON, `{"lc":2,"type":"constructor","id":["tests","golden","Point"],"method":null,"args":[],"kwargs":{"x":1e300}}`},
		{TypeMsgpack, ""},
		{TypeMsgpack, "\xc1"},
		{TypeMsgpack, "\x01\x02"},
		{TypeMsgpack, "\xdd\xff\xff\xff\xff"},
		{TypeMsgpack, "\xd4\x00\x01"},                     // ext 0 whose payload is not an array
		{TypeMsgpack, "\xd5\x00\x91\x01"},                 // ext 0 with 1 element
		{TypeMsgpack, "\x81\x91\x01\x02"},                 // array as a map key
		{TypeMsgpack, "\xd6\xff\x00\x00\x00"},             // 3-byte timestamp payload (truncated)
		{TypeMsgpack, "\xc7\x05\x06\x94\xa0\x90\xa0\xa0"}, // numpy with a str buffer
	} {
		_, err := JSONPlus{}.LoadsTyped(tc.typ, []byte(tc.data))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s %q: %v", tc.typ, tc.data, err)
		}
	}
}

func TestDumpsWithPlainCodec(t *testing.T) {
	typ, data, err := DumpsWith(JSONPlus{}, "x", []byte("ignored"))
	if err != nil || typ != TypeJSON {
		t.Fatal(typ, err)
	}
	v, err := LoadsWith(JSONPlus{}, typ, data, []byte("other"))
	if err != nil || v != "x" {
		t.Fatal(v, err)
	}
	e := encrypted(t, keyring(t, testKey))
	typ, data, _ = DumpsWith(e, "x", []byte("a"))
	if _, err := LoadsWith(e, typ, data, []byte("b")); err != ErrDecrypt {
		t.Fatal(err)
	}
	if !strings.HasSuffix(typ, "+mvgcm") {
		t.Fatal(typ)
	}
}
