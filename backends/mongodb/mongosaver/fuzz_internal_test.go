package mongosaver

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzReadDocument feeds arbitrary BSON to what reads a checkpoints
// document another writer may have stored (Python's msgpack, JS's json,
// memvault's own): unmarshalling, the metadata, the checkpoint binary, its
// inline values and the engine's document. Hostile documents must give
// errors, never panics.
func FuzzReadDocument(f *testing.F) {
	seed := func(typ string, cp []byte, meta any) {
		b, err := bson.Marshal(bson.D{{Key: fThread, Value: "t"}, {Key: fNS, Value: ""}, {Key: fID, Value: "1"},
			{Key: fType, Value: typ}, {Key: fCP, Value: cp}, {Key: fMeta, Value: meta}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed("json", []byte(`{"v":4,"id":"1","ts":"2026-01-01T00:00:00Z","channel_values":{"a":1},"channel_versions":{"a":"1"},"versions_seen":{}}`),
		bson.D{{Key: "source", Value: bson.A{"json", []byte(`"loop"`)}}})
	seed("msgpack", []byte{0x82, 0xa1, 'v', 0x04, 0xa2, 'i', 'd', 0xa1, '1'}, bson.D{{Key: "step", Value: bson.A{"msgpack", []byte{0x01}}}})
	seed("json+memvault", []byte(`{"v":4,"id":"1"}`), bson.Binary{Subtype: 0, Data: []byte(`{"a":1}`)})
	seed("bytes", nil, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		var d cpDoc
		if bson.Unmarshal(b, &d) != nil {
			return
		}
		_, _ = decodeMetadata(d.Meta)
		if _, err := d.parse(); err != nil {
			return
		}
		_, _ = d.rows()
		_, _ = d.decoded()
	})
}
