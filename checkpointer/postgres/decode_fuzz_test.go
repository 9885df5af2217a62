package postgres

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// split turns fuzz bytes into array elements (0xff separates them), so every
// width and content of the aggregated arrays is reachable.
func split(b []byte) pgtype.FlatArray[[]byte] {
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(b, []byte{0xff})
}

// FuzzDecodeRow feeds arbitrary rows to the decoder GetTuple and List use:
// it must return a tuple or an error, never panic.
func FuzzDecodeRow(f *testing.F) {
	doc := []byte(`{"v":1,"id":"x","ts":"2024-05-04T06:32:42.235444+00:00","channel_values":{"a":1},"channel_versions":{"a":"1","b":2},"versions_seen":{"n":{"a":"1"}}}`)
	f.Add(doc, []byte(`{"step":1}`), []byte("b\xff2\xffjson\xff\"x\""), []byte("t\xff0\xffa\xffjson\xff1"), []byte("t\xff0\xffjson\xff\"s\""), true)
	f.Add(doc, []byte(`null`), []byte("b\xff2\xffempty\xff"), []byte("t\xffx\xffa\xffjson\xff1"), []byte("t\xff0\xffmsgpack\xff\x04"), true)
	f.Add([]byte(`{"v":4}`), []byte(`[]`), []byte("a\xff1\xffmsgpack+aes\xff\x00"), []byte(""), []byte("a\xffb"), false)
	f.Add([]byte(`{`), []byte(`{}`), []byte(""), []byte(""), []byte(""), false)
	s, err := New(nilDB{}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, checkpoint, metadata, values, writes, sends []byte, hasParent bool) {
		r := rawTuple{threadID: "t", id: "c", checkpoint: checkpoint, metadata: metadata,
			values: split(values), writes: split(writes), sends: split(sends)}
		if hasParent {
			p := "p"
			r.parent = &p
		}
		tu, err := s.decode(&r)
		if err == nil && (tu == nil || tu.Checkpoint == nil || tu.Metadata == nil) {
			t.Fatalf("no error and incomplete tuple %+v", tu)
		}
	})
}

// nilDB satisfies DB for tests that never reach the database.
type nilDB struct{ DB }
