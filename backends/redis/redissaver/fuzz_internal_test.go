package redissaver

import (
	"bytes"
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// FuzzRecords feeds arbitrary bytes, as a damaged or foreign hash field
// would hold them, to every decoder of stored records: each returns a
// record or an error wrapping ErrRecord, never panics; and what pack
// writes unpacks to the same parts.
func FuzzRecords(f *testing.F) {
	h := head{v: 4, runID: "run", stamp: "s", versions: map[string]string{"a": "1", "b": ""}}
	f.Add(h.pack(), "task\x001")
	f.Add(packValue(checkpointer.ValueRow{Type: "json", Data: []byte(`"x"`)}), "t\x00x")
	f.Add(packWrite("p", checkpointer.WriteRow{Channel: "c", Type: "json", Data: nil}), "")
	f.Add(pack([]byte("json"), []byte("{}"), nil), "t\x00-1")
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "\x00")
	f.Fuzz(func(t *testing.T, b []byte, field string) {
		check := func(what string, err error) {
			if err != nil && !errors.Is(err, ErrRecord) {
				t.Fatalf("%s: %v does not wrap ErrRecord", what, err)
			}
		}
		for _, want := range []int{-1, 2, 3, 4} {
			_, err := unpack(b, want)
			check("unpack", err)
		}
		_, err := unpackHead(b)
		check("unpackHead", err)
		_, err = unpackVersions(b)
		check("unpackVersions", err)
		_, err = unpackValue("c", "1", b)
		check("unpackValue", err)
		_, err = writeRows(map[string]string{field: string(b)})
		check("writeRows", err)

		// Round trip: b split at its NUL bytes, packed, unpacks the same.
		parts := bytes.Split(b, []byte{0})
		got, err := unpack(pack(parts...), len(parts))
		if err != nil {
			t.Fatalf("unpack(pack(%q)): %v", parts, err)
		}
		for i := range parts {
			if !bytes.Equal(got[i], parts[i]) || (got[i] == nil) != (parts[i] == nil) {
				t.Fatalf("part %d: %q, want %q", i, got[i], parts[i])
			}
		}
	})
}
