package checkpointertest

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
)

// testFidelity holds every saver to one Go type per value, compared
// strictly (int64 is not float64, 5.0 is not 5), whatever the backend and
// whether it encrypts:
//
//   - metadata is JSON: it comes back in memvault's JSON value model
//     (jsonvalue.Canonical), with NUL characters removed as LangGraph does;
//   - channel values and pending writes go through the serializer, which
//     keeps the same numbers and, beyond JSON, []byte and time.Time.
func (s *suite) testFidelity(t *testing.T) {
	sv := s.newSaver(t)
	for _, c := range jsonvaluetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			thread := newThreadID("fid")
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"ch": c.In}, map[string]string{"ch": v})
			cfg := mustPut(t, sv, cfgOf(thread, "", ""), cp, checkpointer.Metadata{"v": c.In}, map[string]string{"ch": v})
			mustPutWrites(t, sv, cfg, []wr{{"ch", c.In}}, "task", "")

			got := mustGetSome(t, sv, cfgOf(thread, "", ""))
			if d := jsonvalue.Diff(metadataWant(c), got.Metadata["v"]); d != "" {
				t.Errorf("metadata: %s", d)
			}
			want := channelWant(c)
			if d := jsonvalue.Diff(want, got.Checkpoint.ChannelValues["ch"]); d != "" {
				t.Errorf("channel value: %s", d)
			}
			if len(got.PendingWrites) != 1 {
				t.Fatalf("%d pending writes, want 1", len(got.PendingWrites))
			}
			if d := jsonvalue.Diff(want, got.PendingWrites[0].Value); d != "" {
				t.Errorf("pending write: %s", d)
			}
			listed := listThread(t, sv, thread, "")
			if len(listed) != 1 {
				t.Fatalf("list found %d checkpoints", len(listed))
			}
			if d := jsonvalue.Diff(metadataWant(c), listed[0].Metadata["v"]); d != "" {
				t.Errorf("listed metadata: %s", d)
			}
		})
	}
	t.Run("refused_invalid_utf8_values_store_nothing", s.testInvalidUTF8)
	t.Run("refused_numbers_store_nothing", s.testRefusedNumbers)
	t.Run("nonfinite_channel_values", s.testNonFiniteValues)
	t.Run("metadata_at_max_depth", func(t *testing.T) {
		// The metadata object is level 1, deepValue adds one a level.
		thread := newThreadID("fid-deep")
		deep := deepValue(checkpointer.MaxMetadataDepth - 1)
		mustPut(t, sv, cfgOf(thread, "", ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"v": deep}, nil)
		if d := jsonvalue.Diff(deep, mustGetSome(t, sv, cfgOf(thread, "", "")).Metadata["v"]); d != "" {
			t.Errorf("metadata %d levels deep: %s", checkpointer.MaxMetadataDepth, d)
		}
	})
	t.Run("refused_metadata_stores_nothing", func(t *testing.T) {
		for name, bad := range map[string]any{"nan": math.NaN(), "inf": math.Inf(-1), "bad_utf8": "a\xffb", "channel": make(chan int),
			"too_deep": deepValue(checkpointer.MaxMetadataDepth), "far_too_deep": deepValue(5000)} {
			thread := newThreadID("fid-bad")
			_, err := sv.Put(t.Context(), cfgOf(thread, "", ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"v": bad}, nil)
			if !errors.Is(err, checkpointer.ErrInvalidMetadata) {
				t.Errorf("Put with %s metadata: %v, want checkpointer.ErrInvalidMetadata", name, err)
			}
			if tp := mustGet(t, sv, cfgOf(thread, "", "")); tp != nil {
				t.Errorf("Put with %s metadata stored checkpoint %s", name, tp.Checkpoint.ID)
			}
		}
	})
}

// metadataWant is the case's model value with NUL characters removed.
func metadataWant(c jsonvaluetest.Case) any {
	if s, ok := c.Want.(string); ok {
		return strings.ReplaceAll(s, "\x00", "")
	}
	return c.Want
}

// channelWant is what the serializer gives back: the JSON model, except
// that times stay time.Time and a nil []byte is an empty one (the
// serializer's "bytes" type), not null.
func channelWant(c jsonvaluetest.Case) any {
	switch x := c.In.(type) {
	case time.Time:
		return x
	case float64, float32, json.Number:
		// The serializer keeps the sign of zero the JSON model drops
		// (jsonb has no -0.0; a serialized blob has).
		if f, ok := c.Want.(float64); ok && f == 0 && negativeZero(x) {
			return math.Copysign(0, -1)
		}
	case []byte:
		if x == nil {
			return []byte{}
		}
	}
	return c.Want
}

// negativeZero reports whether v is a float or number literal holding -0.
func negativeZero(v any) bool {
	switch x := v.(type) {
	case float64:
		return x == 0 && math.Signbit(x)
	case float32:
		return x == 0 && math.Signbit(float64(x))
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0 && math.Signbit(f)
	}
	return false
}
