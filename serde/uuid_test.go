package serde

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvault/memvault/serde/pyvalue"
)

// TestPythonUUIDReadsAsItsCanonicalString: a uuid.UUID inside a Python
// msgpack blob (ext 0 ["uuid", "UUID", "<32 hex>"]) decodes to a UUID that
// every JSON output prints as its canonical string — not as 16 numbers —
// and that the msgpack encoder writes back as the same ext, byte for byte.
func TestPythonUUIDReadsAsItsCanonicalString(t *testing.T) {
	const canonical = "1ef4f797-8335-6428-8001-8a1503f9b875"
	hexDigits := strings.ReplaceAll(canonical, "-", "")
	// {"id": UUID(...)} as Python's msgpack serializer writes it: a map of
	// one entry whose value is ext 0 (45 bytes) ["uuid", "UUID", hex].
	raw, _ := hex.DecodeString("81a26964" + "c72d00" + "93a475756964a455554944d920" + hex.EncodeToString([]byte(hexDigits)))
	v, err := MsgPack{}.LoadsTyped(TypeMsgpack, raw)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := v.(map[string]any)["id"].(pyvalue.UUID)
	if !ok || id.String() != canonical {
		t.Fatalf("decoded %#v, want UUID %s", v, canonical)
	}
	out, err := json.Marshal(v)
	if err != nil || string(out) != `{"id":"`+canonical+`"}` {
		t.Fatalf("JSON output %s (%v), want the canonical string", out, err)
	}
	_, again, err := MsgPack{}.DumpsTyped(v)
	if err != nil || !bytes.Equal(again, raw) {
		t.Fatalf("re-encoded % x (%v), want % x", again, err, raw)
	}
	var back pyvalue.UUID
	if err := json.Unmarshal([]byte(`"`+canonical+`"`), &back); err != nil || back != id {
		t.Fatalf("UnmarshalText: %v %v", back, err)
	}
}
