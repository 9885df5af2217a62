package adk

import (
	"testing"
)

// FuzzDecodeStored feeds the decoders of stored session items and event
// items what someone with write access to the store could put there:
// they must refuse it with an error or decode it, never panic, and a
// session record they accept must survive its own encoding unchanged.
func FuzzDecodeStored(f *testing.F) {
	f.Add(int64(1), int64(1700000000000000000), int64(0), "", []byte(nil), "", []byte(`{"id":"e1","author":"user"}`), false)
	f.Add(int64(3), int64(1), int64(2), "ab12", []byte(`[{"id":"e1"},{"id":"e2"}]`), "cd34", []byte(`{"id":"e2","timestamp":"2026-01-02T03:04:05Z"}`), true)
	f.Add(int64(-1), int64(-1), int64(-5), "x", []byte(`[`), "\x00", []byte(`{"content":{"parts":[{"text":1}]}}`), true)
	f.Fuzz(func(t *testing.T, rev, updated, seq int64, last string, legacy []byte, prev string, event []byte, withLegacy bool) {
		v := map[string]any{"rev": rev, "updated_ns": updated, "state": map[string]any{"k": last}, "seq": seq, "last": last}
		if withLegacy {
			v["events"] = legacy
		}
		r, err := decodeRecord(v)
		if err == nil && !r.legacy {
			again, err := decodeRecord(r.value())
			if err != nil {
				t.Fatalf("a record decoded from %v does not decode from its own encoding: %v", v, err)
			}
			if again.rev != r.rev || !again.updated.Equal(r.updated) || again.seq != r.seq || again.last != r.last {
				t.Fatalf("record %+v came back as %+v", r, again)
			}
		}
		_, _, _ = decodeEvent(map[string]any{"prev": prev, "event": event})
		_, _, _ = decodeEvent(map[string]any{"prev": event, "event": prev})
	})
}
