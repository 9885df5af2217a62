package pgsaver

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memvault/memvault/checkpointer"
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
		tu, err := s.decode(context.Background(), &r)
		if err == nil && (tu == nil || tu.Checkpoint == nil || tu.Metadata == nil) {
			t.Fatalf("no error and incomplete tuple %+v", tu)
		}
	})
}

// nilDB satisfies DB for tests that never reach the database.
type nilDB struct{ DB }

// FuzzListQuery: whatever the config and options, List's statement carries
// every value as a parameter (placeholders $1..$n match the arguments) and
// no input text reaches the SQL.
func FuzzListQuery(f *testing.F) {
	f.Add(true, "t", "ns", "id", "before", 10, "k", "v", false)
	f.Add(false, "", "", "", "", 0, "", "", true)
	f.Add(true, "'; DROP TABLE checkpoints; --", "$1", "?", "\x00", -1, "a\x00", "$2", false)
	s, err := New(nilDB{}, Options{Schema: `we"ird`})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, hasCfg bool, thread, ns, id, before string, limit int, fk, fv string, all bool) {
		var cfg *checkpointer.Config
		if hasCfg {
			cfg = &checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: id}
		}
		opt := checkpointer.ListOptions{Limit: limit, AllNamespaces: all}
		if before != "" {
			opt.Before = &checkpointer.Config{CheckpointID: before}
		}
		if fk != "" {
			opt.Filter = map[string]any{fk: fv}
		}
		sql, args, err := s.listQuery(cfg, opt)
		if err != nil || sql == "" {
			return
		}
		for i := range args {
			if !strings.Contains(sql, "$"+strconv.Itoa(i+1)) {
				t.Fatalf("placeholder $%d missing:\n%s", i+1, sql)
			}
		}
		if strings.Contains(sql, "$"+strconv.Itoa(len(args)+1)) {
			t.Fatalf("placeholder without argument:\n%s", sql)
		}
		// The same shape with other values gives the same statement.
		x := func(v string) string {
			if v == "" {
				return ""
			}
			return "x"
		}
		var cfg2 *checkpointer.Config
		if cfg != nil {
			cfg2 = &checkpointer.Config{ThreadID: x(thread), CheckpointNS: x(ns), CheckpointID: x(id)}
		}
		opt2 := opt
		if opt.Before != nil {
			opt2.Before = &checkpointer.Config{CheckpointID: "x"}
		}
		if opt.Filter != nil {
			opt2.Filter = map[string]any{"x": "x"}
		}
		sql2, _, err := s.listQuery(cfg2, opt2)
		if err != nil || sql2 != sql {
			t.Fatalf("input text changed the statement:\n%s\nvs\n%s (%v)", sql, sql2, err)
		}
	})
}
