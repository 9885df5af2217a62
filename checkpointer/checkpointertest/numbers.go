package checkpointertest

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
	"github.com/memvault/memvault/serde"
)

// testRefusedNumbers holds every saver to one rule for a json.Number that
// is no JSON number or is beyond float64 (jsonvaluetest.RefusedNumbers:
// "1e400", leading zeros, hex, ...): Put and PutWrites refuse it with
// serde.ErrUnsupportedValue in a channel value or pending write and with
// checkpointer.ErrInvalidMetadata in metadata, as the store refuses it
// with store.ErrInvalidArgument; the error does not quote it; and nothing
// is stored. Before, a "1e400" channel value was stored and came back as
// +Inf from the JSON serializer (and was refused by msgpack): a different
// value, and a different answer by serializer. An integer literal of any
// size is kept exactly (see the number_400_digits fidelity case).
func (s *suite) testRefusedNumbers(t *testing.T) {
	sv := s.newSaver(t)
	checkErr := func(t *testing.T, op string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v, want an error wrapping %v", op, err, want)
		}
		if strings.Contains(err.Error(), jsonvaluetest.SecretDigits) {
			t.Fatalf("%s: error %q shows the number", op, err)
		}
	}
	for name, bad := range jsonvaluetest.RefusedNumbers() {
		t.Run(name, func(t *testing.T) {
			for _, ns := range []string{"", childNS} {
				thread := newThreadID("num")
				v1 := sv.NextVersion("")
				nested := map[string]any{"ok": int64(1), "l": []any{"x", bad}}

				// A new thread: nothing at all is stored.
				cp := newCheckpoint(0, map[string]any{"a": "fine", "z": nested}, map[string]string{"a": v1, "z": v1})
				_, err := sv.Put(t.Context(), cfgOf(thread, ns, ""), cp, nil, map[string]string{"a": v1, "z": v1})
				checkErr(t, "Put (channel value)", err, serde.ErrUnsupportedValue)
				_, err = sv.Put(t.Context(), cfgOf(thread, ns, ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"n": nested}, nil)
				checkErr(t, "Put (metadata)", err, checkpointer.ErrInvalidMetadata)
				if tp := mustGet(t, sv, cfgOf(thread, ns, "")); tp != nil {
					t.Fatalf("refused Put stored checkpoint %s", tp.Checkpoint.ID)
				}

				// An existing thread keeps its latest checkpoint and values.
				first := newCheckpoint(0, map[string]any{"a": "kept"}, map[string]string{"a": v1})
				cfg := mustPut(t, sv, cfgOf(thread, ns, ""), first, checkpointer.Metadata{"m": int64(1)}, map[string]string{"a": v1})
				v2 := sv.NextVersion(v1)
				next := newCheckpoint(1, map[string]any{"a": "changed", "z": bad}, map[string]string{"a": v2, "z": v2})
				_, err = sv.Put(t.Context(), cfg, next, nil, map[string]string{"a": v2, "z": v2})
				checkErr(t, "Put (channel value)", err, serde.ErrUnsupportedValue)
				_, err = sv.Put(t.Context(), cfg, newCheckpoint(1, nil, nil), checkpointer.Metadata{"m": bad}, nil)
				checkErr(t, "Put (metadata)", err, checkpointer.ErrInvalidMetadata)

				// Pending writes: a regular call and an upserting one (special
				// channel) are both refused whole.
				err = sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"a", "fine"}, {"z", nested}}), "task", "")
				checkErr(t, "PutWrites", err, serde.ErrUnsupportedValue)
				err = sv.PutWrites(t.Context(), cfg, toWrites([]wr{{checkpointer.ChannelError, bad}}), "task2", "")
				checkErr(t, "PutWrites (special channel)", err, serde.ErrUnsupportedValue)

				got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
				if got.Checkpoint.ID != first.ID || !Equal(map[string]any{"a": "kept"}, got.Checkpoint.ChannelValues) {
					t.Fatalf("after refused writes: checkpoint %s with %v, want %s with a=kept", got.Checkpoint.ID, got.Checkpoint.ChannelValues, first.ID)
				}
				if m, ok := got.Metadata["m"].(int64); !ok || m != 1 {
					t.Fatalf("after refused writes: metadata m is %#v, want int64 1", got.Metadata["m"])
				}
				if len(got.PendingWrites) != 0 {
					t.Fatalf("refused PutWrites stored %d writes", len(got.PendingWrites))
				}
				if n := len(listThread(t, sv, thread, ns)); n != 1 {
					t.Fatalf("thread has %d checkpoints, want 1", n)
				}
			}
		})
	}
}

// testNonFiniteValues: NaN, +Inf and -Inf are float64 values a channel
// value or pending write carries (the serializer writes them as LangGraph
// does) and come back as the same float64 from every saver, nested too;
// metadata, which is JSON, refuses them (see refused_metadata_stores_nothing).
func (s *suite) testNonFiniteValues(t *testing.T) {
	sv := s.newSaver(t)
	for name, f := range map[string]float64{"nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1)} {
		t.Run(name, func(t *testing.T) {
			thread := newThreadID("nonfinite")
			v := sv.NextVersion("")
			val := map[string]any{"f": f, "l": []any{f, int64(1)}}
			cp := newCheckpoint(0, map[string]any{"ch": val}, map[string]string{"ch": v})
			cfg := mustPut(t, sv, cfgOf(thread, "", ""), cp, nil, map[string]string{"ch": v})
			mustPutWrites(t, sv, cfg, []wr{{"ch", val}}, "task", "")
			got := mustGetSome(t, sv, cfgOf(thread, "", ""))
			if len(got.PendingWrites) != 1 {
				t.Fatalf("%d pending writes, want 1", len(got.PendingWrites))
			}
			for what, v := range map[string]any{"channel value": got.Checkpoint.ChannelValues["ch"], "pending write": got.PendingWrites[0].Value} {
				m, _ := v.(map[string]any)
				l, _ := m["l"].([]any)
				if len(l) != 2 || !sameFloat(m["f"], f) || !sameFloat(l[0], f) || l[1] != int64(1) {
					t.Errorf("%s: %#v, want f and l[0] float64 %v, l[1] int64 1", what, v, f)
				}
			}
		})
	}
}

// sameFloat reports whether v is a float64 equal to f, NaN equal to NaN.
func sameFloat(v any, f float64) bool {
	g, ok := v.(float64)
	return ok && (g == f || math.IsNaN(g) && math.IsNaN(f))
}
