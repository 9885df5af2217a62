package checkpointertest

import (
	"encoding/json"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// StoreDocument stores one checkpoint row as another LangGraph writer
// would: doc is its checkpoint document, stored as it is; parent its
// parent's id ("" for none); metadata {}; no value or write rows.
type StoreDocument func(t *testing.T, thread, ns, id, parent string, doc []byte)

// RunForeignDocuments checks that checkpoint documents memvault did not
// write read the same from every backend that can hold them (a SQL or
// document database another LangGraph writer shares). newSaver returns a
// saver and a StoreDocument writing to the same storage.
//
// A document without "v" is of the current format, 4, as LangGraph JS
// reads it (undefined < 4 is false) and as every memvault backend does:
// its tuple's Checkpoint.V is 4 and nothing is migrated from its parent's
// __pregel_tasks writes. A document with "v": 3 gets them as its pending
// sends, on every backend alike.
func RunForeignDocuments(t *testing.T, newSaver func(t *testing.T) (checkpointer.Saver, StoreDocument)) {
	for _, c := range []struct {
		name  string
		v     any // nil: no "v" key
		wantV int
		sends bool
	}{
		{"no_v_is_current", nil, 4, false},
		{"v3_reads_parent_sends", 3, 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sv, store := newSaver(t)
			thread := newThreadID("foreign")
			va := sv.NextVersion("")
			parent := newCheckpoint(0, map[string]any{"a": "x"}, map[string]string{"a": va})
			pcfg := mustPut(t, sv, cfgOf(thread, "", ""), parent, nil, map[string]string{"a": va})
			mustPutWrites(t, sv, pcfg, []wr{{checkpointer.ChannelTasks, "send-1"}}, "task-1", "")
			id := checkpointer.NewID(1)
			doc := map[string]any{"id": id, "ts": "2025-01-01T00:00:00+00:00", "channel_values": map[string]any{},
				"channel_versions": map[string]any{"a": va}, "versions_seen": map[string]any{}}
			if c.v != nil {
				doc["v"] = c.v
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			store(t, thread, "", id, parent.ID, raw)

			got := mustGetSome(t, sv, cfgOf(thread, "", id))
			listed := listThread(t, sv, thread, "")
			if len(listed) != 2 || listed[0].Checkpoint.ID != id {
				t.Fatalf("List found %d checkpoints, want the stored one first of 2", len(listed))
			}
			for how, tp := range map[string]*checkpointer.Tuple{"GetTuple": got, "List": listed[0]} {
				if tp.Checkpoint.V != c.wantV {
					t.Errorf("%s: Checkpoint.V = %d, want %d", how, tp.Checkpoint.V, c.wantV)
				}
				if !Equal("x", tp.Checkpoint.ChannelValues["a"]) {
					t.Errorf("%s: channel a = %#v, want x", how, tp.Checkpoint.ChannelValues["a"])
				}
				sends, migrated := tp.Checkpoint.ChannelValues[checkpointer.ChannelTasks]
				switch {
				case c.sends && !Equal([]any{"send-1"}, sends):
					t.Errorf("%s: %s = %#v, want the parent's send", how, checkpointer.ChannelTasks, sends)
				case !c.sends && migrated:
					t.Errorf("%s: a document of the current format got its parent's sends as %s: %#v", how, checkpointer.ChannelTasks, sends)
				}
			}
		})
	}
}
