package serde

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

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

// testAAD returns distinct associated-data bytes for serde's own tests,
// which only need bytes that differ; the layout drivers use is
// internal/binding's (which imports serde, so it cannot be used here).
func testAAD(parts ...any) []byte { return []byte(fmt.Sprintf("%q", parts)) }
