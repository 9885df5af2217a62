package redissaver

import (
	"bytes"
	"maps"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// TestPutBatchAllocs: building a put's script call (keys, records, head,
// arguments) for the bench's shape — 5 channels, 2 new values, a run id —
// stays within a few allocations per part (26 now, 11 of them go-redis's
// arguments boxed in interfaces). The first version made 49:
// nine key concatenations, a copy per pack part, a random stamp, the
// metadata decoded by reflection.
func TestPutBatchAllocs(t *testing.T) {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := s.d
	v := "00000000000000000000000000000002.0000000000000001"
	p := &checkpointer.PutRows{Thread: "put-7", ID: "1f0c0000-0000-6000-8000-000000000007", V: 4,
		Doc: make([]byte, 400), Meta: []byte(`{"run_id":"bench","source":"loop","step":7}`),
		Versions: map[string]string{"messages": v, "scratch": v, "context": v, "summary": v, "step": v},
		Values: []checkpointer.ValueRow{{Channel: "messages", Version: v, Type: "json", Data: make([]byte, 400)},
			{Channel: "scratch", Version: v, Type: "json", Data: make([]byte, 300)}}}
	n := testing.AllocsPerRun(100, func() {
		if _, _, err := d.putBatch(p); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("putBatch: %v allocations", n)
	if n > 30 {
		t.Fatalf("putBatch made %v allocations, want at most 30", n)
	}
}

// TestHeadRecordBytes: the head record written in place is the bytes the
// first version's pack of its parts wrote (stored heads stay readable
// both ways).
func TestHeadRecordBytes(t *testing.T) {
	for _, h := range []head{
		{v: 4, runID: "run", stamp: "s.1", versions: map[string]string{"a": "1"}},
		{v: 1, versions: map[string]string{}},
		{v: 12345, runID: string(make([]byte, 300)), stamp: "x", versions: map[string]string{"": "", "long": string(make([]byte, 200))}},
	} {
		// One channel at most in the maps compared byte for byte: map
		// order is random.
		want := pack([]byte(strconv.Itoa(h.v)), []byte(h.runID), []byte(h.stamp), packVersionsParts(h.versions))
		if len(h.versions) <= 1 && !bytes.Equal(h.pack(), want) {
			t.Fatalf("head %+v: pack %x, want %x", h, h.pack(), want)
		}
		got, err := unpackHead(h.pack())
		if err != nil || got.v != h.v || got.runID != h.runID || got.stamp != h.stamp || !maps.Equal(got.versions, h.versions) {
			t.Fatalf("head %+v read back as %+v, %v", h, got, err)
		}
	}
}

// packVersionsParts is the first version's packVersions.
func packVersionsParts(v map[string]string) []byte {
	parts := make([][]byte, 0, 2*len(v))
	for ch, ver := range v {
		parts = append(parts, []byte(ch), []byte(ver))
	}
	return pack(parts...)
}
