package core

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// encodeCheckpointReflect is EncodeCheckpointJSON as it was written
// before it encoded by hand: json.Marshal of storedCheckpoint. The stored
// bytes must not change (documents are compared, hashed and read by
// Python and JS).
func encodeCheckpointReflect(cp *checkpointer.Checkpoint, style checkpointer.VersionStyle) ([]byte, error) {
	sc := storedCheckpoint{
		V:               cp.V,
		ID:              cp.ID,
		TS:              cp.TS.UTC().Format(checkpointer.TimeLayout),
		ChannelValues:   map[string]json.RawMessage{},
		ChannelVersions: make(map[string]json.RawMessage, len(cp.ChannelVersions)),
		VersionsSeen:    make(map[string]map[string]json.RawMessage, len(cp.VersionsSeen)),
		UpdatedChannels: cp.UpdatedChannels,
	}
	for ch, v := range cp.ChannelVersions {
		sc.ChannelVersions[ch] = encodeVersion(v, style)
	}
	for node, seen := range cp.VersionsSeen {
		m := make(map[string]json.RawMessage, len(seen))
		for ch, v := range seen {
			m[ch] = encodeVersion(v, style)
		}
		sc.VersionsSeen[node] = m
	}
	return json.Marshal(sc)
}

// TestEncodeCheckpointJSONBytes: the hand-written encoder writes exactly
// json.Marshal's bytes, for identifiers that need escaping (HTML
// characters, controls, U+2028, invalid UTF-8, quotes), versions of every
// form, nil and empty maps and lists, and random documents.
func TestEncodeCheckpointJSONBytes(t *testing.T) {
	odd := []string{"", "a", "<b>&amp;", "quote\"back\\slash", "tab\tnl\ncr\r\x00\x01\x1f\x7f", "\u2028\u2029",
		"é日本", "bad\xffutf8", "\xc3", "00000000000000000000000000000002.0.5", "3", "0", "007", "-3",
		"99999999999999999999", "9223372036854775807", "9223372036854775808", "__start__", "branch:to:node"}
	cps := []*checkpointer.Checkpoint{
		sampleCheckpoint(),
		{V: 1, ID: "x", TS: time.Unix(0, 0)},
		{V: 4, ID: "y", ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{"n": nil}, UpdatedChannels: []string{}},
	}
	for _, s := range odd {
		cps = append(cps, &checkpointer.Checkpoint{V: 4, ID: s, TS: time.Date(2024, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)),
			ChannelVersions: map[string]string{s: s, "c": s}, VersionsSeen: map[string]map[string]string{s: {s: s}},
			UpdatedChannels: []string{s, s}})
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return odd[r.IntN(len(odd))] }
	for range 300 {
		cp := &checkpointer.Checkpoint{V: r.IntN(5), ID: pick(), TS: time.Unix(r.Int64N(1<<40), r.Int64N(1e9)),
			ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
		for range r.IntN(20) {
			cp.ChannelVersions[pick()+pick()] = pick()
		}
		for range r.IntN(20) {
			m := map[string]string{}
			for range r.IntN(4) {
				m[pick()] = pick()
			}
			cp.VersionsSeen[pick()+pick()] = m
		}
		for range r.IntN(3) {
			cp.UpdatedChannels = append(cp.UpdatedChannels, pick())
		}
		cps = append(cps, cp)
	}
	for _, style := range []checkpointer.VersionStyle{checkpointer.VersionInt, checkpointer.VersionString} {
		for i, cp := range cps {
			want, err := encodeCheckpointReflect(cp, style)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeCheckpointJSON(cp, style)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("checkpoint %d: EncodeCheckpointJSON wrote\n%s\njson.Marshal writes\n%s", i, got, want)
			}
		}
	}
}

// TestEncodeCheckpointJSONAllocs: a document of a few channels is one
// allocation (the reflecting encoder made one per map and version, 30
// for this one). Every put encodes one.
func TestEncodeCheckpointJSONAllocs(t *testing.T) {
	v := "00000000000000000000000000000002.0000000000000001"
	cp := &checkpointer.Checkpoint{V: 4, ID: "1ef4f797-8335-6428-8001-8a1503f9b875", TS: time.Now(),
		ChannelVersions: map[string]string{"messages": v, "scratch": v, "context": v, "summary": v, "step": v},
		VersionsSeen:    map[string]map[string]string{"agent": {"messages": v, "scratch": v}},
		UpdatedChannels: []string{"messages", "scratch"}}
	n := testing.AllocsPerRun(100, func() {
		if _, err := EncodeCheckpointJSON(cp, checkpointer.VersionInt); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("EncodeCheckpointJSON made %v allocations, want 1", n)
	}
}
