package redissaver

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// TestPutBatchAllocs: building a put's script call (keys, records, head,
// arguments) for the bench's shape — 5 channels, 2 new values, a run id —
// stays within a few allocations (9 now: the arguments are substrings
// of one buffer, passed as *string, which boxes without allocating; 26
// before, 11 of them the arguments boxed in interfaces). The first
// version made 49: nine key concatenations, a copy per pack part, a
// random stamp, the metadata decoded by reflection.
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
	if n > 12 {
		t.Fatalf("putBatch made %v allocations, want at most 12", n)
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

// TestPutArgsBytes: the arguments putBatch writes into one buffer are
// the bytes of the parts it built one by one before (nsID, the record's
// pack, head.pack, valField, packValue), with and without a guard, on
// one server and on the large-values path.
func TestPutArgsBytes(t *testing.T) {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := s.d
	for _, c := range []struct {
		name   string
		single bool
		big    int
		p      *checkpointer.PutRows
	}{
		{"plain", true, 1 << 20, &checkpointer.PutRows{Thread: "t{x}%", NS: "ns", ID: "1f0c-7", V: 4, Type: "json", Doc: []byte(`{"v":4}`),
			Meta: []byte(`{"run_id":"r","step":1}`), Versions: map[string]string{"a": "2"},
			Values: []checkpointer.ValueRow{{Channel: "a", Version: "2", Type: "json", Data: []byte(`"x"`)},
				{Channel: "b", Version: "1", Type: "empty"}, {Channel: "c", Version: "3", Type: "bytes", Data: make([]byte, 300)}}}},
		{"guard, no doc", false, 1 << 20, &checkpointer.PutRows{Thread: "t", ID: "id2", Parent: "id1", NeedsParent: true, V: 3,
			Meta: []byte(`{}`), Versions: map[string]string{}}},
		{"big", true, 2, &checkpointer.PutRows{Thread: "t", ID: "id3", Parent: "id1", V: 4, Type: "json", Doc: []byte(`{}`),
			Meta: []byte(`{}`), Versions: map[string]string{"a": "1"},
			Values: []checkpointer.ValueRow{{Channel: "a", Version: "1", Type: "json", Data: []byte(`"long"`)}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d.single, d.bigPut = c.single, c.big
			b, h, err := d.putBatch(c.p)
			if err != nil {
				t.Fatal(err)
			}
			p := c.p
			guard, index := "", ""
			if p.NeedsParent && p.Parent != "" {
				guard = nsID(p.NS, p.Parent)
			}
			if c.single {
				index = p.Thread
			}
			want := []string{guard, nsID(p.NS, p.ID), string(pack([]byte(p.Type), p.Doc, p.Meta)), p.Parent, string(h.pack()),
				nsID(p.ID, p.NS), index}
			if c.big == 1<<20 {
				for _, v := range p.Values {
					want = append(want, valField(p.NS, v.Channel, v.Version), string(packValue(v)))
				}
			}
			got := make([]string, 0, len(b.args)-2)
			for _, a := range b.args[2:] {
				got = append(got, *a.(*string))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("arguments\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestWriteArgsBytes: writesBatch's arguments, written into one buffer,
// are the bytes of the parts it built one by one before (nsID,
// writeField, packWrite), a nil Data included, and it allocates a few
// times whatever the number of writes.
func TestWriteArgsBytes(t *testing.T) {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := s.d
	w := &checkpointer.WriteRows{Thread: "t", NS: "ns", Checkpoint: "1f0c-1", Task: "task-9", Path: "~__pregel_pull, agent",
		Rows: []checkpointer.WriteRow{{Idx: 0, Channel: "messages", Type: "json", Data: []byte(`[1]`)},
			{Idx: -1, Channel: "__error__", Type: "json"}, {Idx: 12345, Channel: "c", Type: "bytes", Data: make([]byte, 300)}}}
	for _, single := range []bool{true, false} {
		d.single = single
		b := d.writesBatch(w)
		index := ""
		if single {
			index = w.Thread
		}
		want := []string{nsID(w.NS, w.Checkpoint), index, "0"}
		for _, r := range w.Rows {
			want = append(want, writeField(w.Task, r.Idx), string(packWrite(w.Path, r)))
		}
		got := make([]string, 0, len(b.args)-3)
		for _, a := range b.args[3:] {
			got = append(got, *a.(*string))
		}
		if !slices.Equal(got, want) || b.args[2] != 0 {
			t.Fatalf("single %v: arguments %v %q, want 0 %q", single, b.args[2], got, want)
		}
	}
	n := testing.AllocsPerRun(100, func() { d.writesBatch(w) })
	t.Logf("writesBatch: %v allocations", n)
	if n > 8 {
		t.Fatalf("writesBatch made %v allocations, want at most 8", n)
	}
}
