package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/serde/pyvalue"
)

// rawJSON is a json.Marshaler whose output holds bytes that are not UTF-8.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(`"` + string(r) + `"`), nil }

// TestInvalidUTF8Refused: no codec writes a string that is not valid
// UTF-8, wherever it sits (value, map key, constructor, struct field,
// MarshalJSON output): JSON would replace its bad bytes by U+FFFD and
// LangGraph's msgpack readers would refuse the row. The error wraps
// ErrUnsupportedValue, says where the bad byte is and never shows the
// string. Binary data in a []byte is kept byte for byte.
func TestInvalidUTF8Refused(t *testing.T) {
	bad := map[string]any{
		"string":       "secret\xff",
		"map_key":      map[string]any{"secret\xfe": int64(1)},
		"nested":       []any{map[string]any{"k": []any{"ok", "secret\x80"}}},
		"typed_map":    map[string]string{"secret\xc3(": "v"},
		"non_str_key":  map[int]string{1: "secret\xed\xa0\x80"},
		"struct":       struct{ Name string }{"secret\xff"},
		"set":          pyvalue.Set{"secret\xff"},
		"constructor":  pyvalue.Constructor{LC: 2, Type: "constructor", ID: []string{"m", "secret\xff"}},
		"method":       pyvalue.Constructor{LC: 2, Type: "constructor", ID: []string{"m", "C"}, Method: "secret\xff", Args: []any{int64(1)}},
		"py_object":    pyvalue.PyObject{Ext: pyvalue.ExtConstructorSingleArg, Module: "mod", Class: "secret\xff", Arg: "x"},
		"marshal_json": rawJSON("secret\xff"),
		"delta":        pyvalue.DeltaSnapshot{Value: "secret\xff"},
	}
	serializers := codecs()
	serializers["envelope"] = encrypted(t, keyring(t, testKey))
	serializers["envelope_msgpack"], _ = NewEncrypted(MsgPack{}, keyring(t, testKey))
	for sname, s := range serializers {
		for name, v := range bad {
			_, _, err := s.DumpsTyped(v)
			if !errors.Is(err, ErrUnsupportedValue) {
				t.Errorf("%s %s: %v, want ErrUnsupportedValue", sname, name, err)
				continue
			}
			if msg := err.Error(); strings.Contains(msg, "secret") || !utf8.ValidString(msg) || !strings.Contains(msg, "not valid UTF-8") {
				t.Errorf("%s %s: error %q", sname, name, msg)
			}
		}
		// Bytes are bytes: kept exactly, nested or not.
		for _, v := range []any{[]byte("\xff\xfe\x00"), map[string]any{"raw": []byte("\xff")}} {
			got := roundTrip(t, s, v)
			if b, ok := got.([]byte); ok && !bytes.Equal(b, []byte("\xff\xfe\x00")) {
				t.Errorf("%s: bytes came back as %q", sname, b)
			}
			if m, ok := got.(map[string]any); ok && !bytes.Equal(m["raw"].([]byte), []byte("\xff")) {
				t.Errorf("%s: nested bytes came back as %q", sname, m["raw"])
			}
		}
		// Valid UTF-8 of every width still passes.
		if got := roundTrip(t, s, "é – 日本 – 🦜 – \U0010FFFF"); got != "é – 日本 – 🦜 – \U0010FFFF" {
			t.Errorf("%s: %q", sname, got)
		}
	}
}
