package checkpointer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNewIDLayout(t *testing.T) {
	for _, tc := range []struct {
		step  int
		group string
	}{
		{0, "8000"}, {1, "8001"}, {15, "800f"}, {0x3FFF, "bfff"}, {-1, "bfff"}, {-2, "bffe"}, {0x4001, "8001"},
	} {
		id := NewID(tc.step)
		if len(id) != 36 {
			t.Fatalf("NewID(%d) = %q, want 36 characters", tc.step, id)
		}
		parts := strings.Split(id, "-")
		if len(parts) != 5 || len(parts[0]) != 8 || len(parts[1]) != 4 || len(parts[2]) != 4 || len(parts[3]) != 4 || len(parts[4]) != 12 {
			t.Fatalf("NewID(%d) = %q, not a canonical UUID", tc.step, id)
		}
		if parts[2][0] != '6' {
			t.Fatalf("NewID(%d) = %q, version nibble %c, want 6", tc.step, id, parts[2][0])
		}
		if parts[3] != tc.group {
			t.Fatalf("NewID(%d) = %q, clock_seq group %s, want %s", tc.step, id, parts[3], tc.group)
		}
		if strings.ToLower(id) != id {
			t.Fatalf("NewID(%d) = %q is not lowercase", tc.step, id)
		}
	}
}

func TestNewIDMonotonic(t *testing.T) {
	prev := ""
	for i := range 10000 {
		id := NewID(i % 3)
		if id <= prev {
			t.Fatalf("id %d %q does not sort after %q", i, id, prev)
		}
		prev = id
	}
}

func TestNewIDMonotonicWhenClockStandsStillOrGoesBack(t *testing.T) {
	at := time.Now().Add(time.Hour)
	a := newIDAt(at, 0)
	b := newIDAt(at, 0)
	c := newIDAt(at.Add(-time.Minute), 0)
	if !(a < b && b < c) {
		t.Fatalf("ids not strictly increasing: %s %s %s", a, b, c)
	}
	ta, _ := IDTime(a)
	tb, _ := IDTime(b)
	if tb.Sub(ta) != 100*time.Nanosecond {
		t.Fatalf("second id is %v after the first, want one tick (100ns)", tb.Sub(ta))
	}
}

func TestIDTime(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456700, time.UTC)
	id := newIDAt(at, 5)
	got, ok := IDTime(id)
	if !ok || !got.Equal(at) {
		t.Fatalf("IDTime(%s) = %v, %v; want %v", id, got, ok, at)
	}
	// LangGraph's example id (reference §1.2).
	got, ok = IDTime("1ef4f797-8335-6428-8001-8a1503f9b875")
	if !ok || got.Year() != 2024 {
		t.Fatalf("IDTime(LangGraph example) = %v, %v; want a 2024 time", got, ok)
	}
	for _, bad := range []string{
		"", "x", "1ef4f797-8335-4428-8001-8a1503f9b875", "1ef4f797_8335-6428-8001-8a1503f9b875",
		"zzzzzzzz-8335-6428-8001-8a1503f9b875", "1ef4f797-zzzz-6428-8001-8a1503f9b875", "1ef4f797-8335-6zzz-8001-8a1503f9b875",
		"00000000-0000-6000-8000-000000000000",
	} {
		if _, ok := IDTime(bad); ok {
			t.Fatalf("IDTime(%q) accepted a non-UUIDv6", bad)
		}
	}
}

func FuzzIDTime(f *testing.F) {
	f.Add("1ef4f797-8335-6428-8001-8a1503f9b875")
	f.Add(NewID(0))
	f.Add("")
	f.Add("00000000-0000-6000-8000-000000000000")
	f.Add("ffffffff-ffff-6fff-bfff-ffffffffffff")
	f.Fuzz(func(t *testing.T, id string) {
		tm, ok := IDTime(id)
		if !ok {
			return
		}
		// The time re-encodes to the id's 60-bit timestamp.
		secs := tm.Unix() - time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC).Unix()
		ts := uint64(secs)*1e7 + uint64(tm.Nanosecond()/100)
		want := fmt.Sprintf("%08x-%04x-6%03x", ts>>28, (ts>>12)&0xFFFF, ts&0x0FFF)
		if got := strings.ToLower(id[:18]); got != want {
			t.Fatalf("IDTime(%q) = %v, which encodes as %s", id, tm, want)
		}
	})
}

func TestIDFloor(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2025, 3, 1, 12, 0, 0, 123456700, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		floor := IDFloor(at)
		if !IsDatableID(floor) {
			t.Fatalf("IDFloor(%v) = %q, not a lowercase UUIDv6", at, floor)
		}
		if got, ok := IDTime(floor); !ok || !got.Equal(at) {
			t.Fatalf("IDTime(IDFloor(%v)) = %v, %v", at, got, ok)
		}
		idAt := newIDAt(at, 3)
		if !(floor <= idAt) {
			t.Fatalf("IDFloor(%v) = %q sorts after an id of that time %q", at, floor, idAt)
		}
		if earlier := IDFloor(at.Add(-100 * time.Nanosecond)); !(earlier < floor) {
			t.Fatalf("floor of an earlier time %q does not sort before %q", earlier, floor)
		}
	}
	if got := IDFloor(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)); got != "00000000-0000-6000-0000-000000000000" {
		t.Fatalf("IDFloor before 1582 = %q", got)
	}
	for id, want := range map[string]bool{
		NewID(1): true, "1ef1a6e2-3c4d-6e5f-8001-0123456789ab": true,
		"1EF1A6E2-3C4D-6E5F-8001-0123456789AB": false, "1ef1a6e2-3c4d-1e5f-8001-0123456789ab": false,
		"0000-step-1": false, "": false,
	} {
		if got := IsDatableID(id); got != want {
			t.Errorf("IsDatableID(%q) = %v, want %v", id, got, want)
		}
	}
}
