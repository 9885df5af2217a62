package checkpointertest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
)

// invalidUTF8Values are channel values holding a string that is not valid
// UTF-8, alone or nested in maps and lists, as a map key too. Each bad
// string starts with "secret": the error must not show it.
func invalidUTF8Values() map[string]any {
	return map[string]any{
		"string":          "secret\xff",
		"truncated_rune":  "secret\xe6\x97",
		"surrogate":       "secret\xed\xa0\x80",
		"in_list":         []any{"ok", int64(1), "secret\xfe"},
		"in_map":          map[string]any{"a": map[string]any{"b": "secret\xc3("}},
		"in_list_in_map":  map[string]any{"ok": "fine", "l": []any{map[string]any{"k": []any{"secret\x80"}}}},
		"map_key":         map[string]any{"secret\xff": int64(1)},
		"nested_map_key":  []any{map[string]any{"ok": map[string]any{"secret\xfe": true}}},
		"typed_map":       map[string]string{"k": "secret\x80"},
		"typed_map_key":   map[string]int{"secret\xf8": 1},
		"struct_field":    struct{ Name string }{"secret\xff"},
		"in_typed_slice":  []string{"ok", "secret\xc0\xaf"},
		"beside_bytes_ok": map[string]any{"raw": []byte("\xff\xfe"), "text": "secret\xff"},
	}
}

// testInvalidUTF8 holds every saver to one rule for strings that are not
// valid UTF-8 in channel values and pending writes: Put and PutWrites
// refuse them with an error wrapping serde.ErrUnsupportedValue, which says
// where the bad byte is but not what the string holds, and store nothing.
// JSON cannot carry such a string (its bytes would become U+FFFD, changing
// the value silently) and LangGraph's msgpack readers refuse it; binary
// data goes in a []byte, which every backend keeps exactly.
func (s *suite) testInvalidUTF8(t *testing.T) {
	sv := s.newSaver(t)
	checkErr := func(t *testing.T, op string, err error) {
		t.Helper()
		if !errors.Is(err, serde.ErrUnsupportedValue) {
			t.Fatalf("%s: %v, want an error wrapping serde.ErrUnsupportedValue", op, err)
		}
		if msg := err.Error(); strings.Contains(msg, "secret") || !utf8.ValidString(msg) || !strings.Contains(msg, "UTF-8") {
			t.Fatalf("%s: error %q shows the value or does not say what is wrong", op, msg)
		}
	}
	for name, bad := range invalidUTF8Values() {
		t.Run(name, func(t *testing.T) {
			for _, ns := range []string{"", childNS} {
				thread := newThreadID("utf8")
				v1 := sv.NextVersion("")

				// A new thread: nothing at all is stored.
				cp := newCheckpoint(0, map[string]any{"a": "fine", "z": bad}, map[string]string{"a": v1, "z": v1})
				_, err := sv.Put(t.Context(), cfgOf(thread, ns, ""), cp, nil, map[string]string{"a": v1, "z": v1})
				checkErr(t, "Put", err)
				if tp := mustGet(t, sv, cfgOf(thread, ns, "")); tp != nil {
					t.Fatalf("refused Put stored checkpoint %s", tp.Checkpoint.ID)
				}

				// An existing thread keeps its latest checkpoint and values.
				first := newCheckpoint(0, map[string]any{"a": "kept"}, map[string]string{"a": v1})
				cfg := mustPut(t, sv, cfgOf(thread, ns, ""), first, nil, map[string]string{"a": v1})
				v2 := sv.NextVersion(v1)
				next := newCheckpoint(1, map[string]any{"a": "changed", "z": bad}, map[string]string{"a": v2, "z": v2})
				_, err = sv.Put(t.Context(), cfg, next, nil, map[string]string{"a": v2, "z": v2})
				checkErr(t, "Put", err)

				// Pending writes: a regular call and an upserting one (special
				// channel) are both refused whole.
				err = sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"a", "fine"}, {"z", bad}}), "task", "")
				checkErr(t, "PutWrites", err)
				err = sv.PutWrites(t.Context(), cfg, toWrites([]wr{{checkpointer.ChannelError, bad}}), "task2", "")
				checkErr(t, "PutWrites (special channel)", err)

				got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
				if got.Checkpoint.ID != first.ID || !Equal(map[string]any{"a": "kept"}, got.Checkpoint.ChannelValues) {
					t.Fatalf("after refused writes: checkpoint %s with %v, want %s with a=kept", got.Checkpoint.ID, got.Checkpoint.ChannelValues, first.ID)
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
