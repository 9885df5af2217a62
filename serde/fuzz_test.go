package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkCanonical asserts the decoder's output can be encoded, and that
// encoding is a fixed point: decode(encode(v)) encodes to the same bytes.
func checkCanonical(t *testing.T, s Serializer, v any) {
	t.Helper()
	typ, enc1, err := s.DumpsTyped(v)
	if err != nil {
		t.Fatalf("decoded value does not encode: %#v: %v", v, err)
	}
	v2, err := s.LoadsTyped(typ, enc1)
	if err != nil {
		t.Fatalf("own output %q does not decode: %v", enc1, err)
	}
	_, enc2, err := s.DumpsTyped(v2)
	if err != nil {
		t.Fatalf("second encode: %v", err)
	}
	if !bytes.Equal(enc1, enc2) {
		t.Fatalf("encoding not stable:\n%q\n%q", enc1, enc2)
	}
}

// FuzzMsgpack feeds arbitrary bytes to the msgpack decoder: no panic, errors
// are ErrMalformed, and what decodes re-encodes stably.
func FuzzMsgpack(f *testing.F) {
	for _, g := range msgpackGolden {
		f.Add(unhexSpaced(&testing.T{}, g.hex))
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})       // array32 of 4G elements
	f.Add([]byte{0xc9, 0x7f, 0xff, 0xff, 0xff, 0x00}) // ext32 of 2 GiB
	f.Add([]byte{0xc1})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := MsgPack{}.LoadsTyped(TypeMsgpack, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		// A str that is not UTF-8 is read as it is stored but never
		// written (checkText): the input must then hold such bytes.
		if _, _, err := (MsgPack{}).DumpsTyped(v); errors.Is(err, ErrUnsupportedValue) && strings.Contains(err.Error(), "not valid UTF-8") {
			if utf8.Valid(data) {
				t.Fatalf("valid UTF-8 input %q decoded to a value refused as invalid UTF-8: %v", data, err)
			}
			return
		}
		checkCanonical(t, MsgPack{}, v)
	})
}

// FuzzJSON feeds arbitrary bytes to the JSON decoder.
func FuzzJSON(f *testing.F) {
	for _, g := range jsonGolden {
		f.Add([]byte(g.json))
	}
	f.Add([]byte(`[NaN, "NaN", -Infinity]`))
	f.Add([]byte(`{"lc":2,"type":"constructor","id":["Map"],"method":null,"args":[[[[1],2]]],"kwargs":{}}`))
	f.Add([]byte(`{"lc":2,"type":"constructor","id":["datetime","datetime"],"method":"fromisoformat","args":["99999-01-01T00:00:00"],"kwargs":{}}`))
	f.Add([]byte(`1e999`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := JSONPlus{}.LoadsTyped(TypeJSON, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		checkCanonical(t, JSONPlus{}, v)
	})
}

// TestDeepNesting checks that hostile nesting is an error, not a stack
// overflow (kept out of the fuzz seeds: large seeds slow minimization).
func TestDeepNesting(t *testing.T) {
	if _, err := decodeMsgpack(bytes.Repeat([]byte{0x91}, MaxDepth+10)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("msgpack: %v", err)
	}
	deep := bytes.Repeat([]byte("["), MaxDepth+10)
	deep = append(deep, bytes.Repeat([]byte("]"), MaxDepth+10)...)
	if _, err := decodeJSON(deep); !errors.Is(err, ErrMalformed) {
		t.Fatalf("json: %v", err)
	}
	var v any = "leaf"
	for range MaxDepth + 10 {
		v = []any{v}
	}
	for name, s := range codecs() {
		if _, _, err := s.DumpsTyped(v); !errors.Is(err, ErrUnsupportedValue) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// FuzzJSONDifferential checks memvault's JSON parser against encoding/json
// (plus the same revival): both accept the same documents and produce the
// same values.
func FuzzJSONDifferential(f *testing.F) {
	for _, g := range jsonGolden {
		f.Add([]byte(g.json))
	}
	f.Add([]byte(`"\ud800\u0041 \udc00 \ud83d\ude00 \u00e9 \/"`))
	f.Add([]byte("\"\xff\xfe ok\""))
	f.Add([]byte(`[-0, 0.0, 1E5, -1e-5, 123456789012345678901234567890, 18446744073709551615, 1e999]`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err1 := decodeJSON(data)
		want, err2 := decodeJSONStd(data)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("parser error %v, encoding/json error %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		_, a, errA := JSONPlus{}.DumpsTyped(got)
		_, b, errB := JSONPlus{}.DumpsTyped(want)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("values differ:\n%s\n%s", a, b)
		}
	})
}
