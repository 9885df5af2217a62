package vecindex

import "runtime"

// arena is the memory of the middle parts (see mid.go): outside the Go
// heap where the platform allows (arena_unix.go), so that their 77 MB at
// 100 000 × 1 536 do not double the garbage collector's heap goal. With
// them on the heap, a store's resident memory after 50 searches grew by
// 130 MB instead of 77 (at the default GOGC the heap may hold as much
// garbage as live data before it collects). The arena is freed when its
// index is unreachable (a cleanup), or at once when it is replaced by a
// larger one (arenaGrow), whose caller holds the index alone.
type arena struct {
	b       []byte
	cleanup runtime.Cleanup
	off     bool // b is off the heap
}

// newArena returns an arena of n bytes, zeroed.
func newArena(n int) *arena {
	b, off := allocOffHeap(n)
	a := &arena{b: b, off: off}
	if off {
		a.cleanup = runtime.AddCleanup(a, freeOffHeap, b)
	}
	return a
}

// free releases a now; nothing may read its bytes after.
func (a *arena) free() {
	if a == nil || !a.off {
		return
	}
	a.cleanup.Stop()
	freeOffHeap(a.b)
	a.b, a.off = nil, false
}

// midRoom makes room for n more bytes of middle parts without
// reallocation, at least want bytes in all.
func (t *codeIndex) midRoom(n, want int) {
	if t.midMem != nil && cap(t.mid)-len(t.mid) >= n {
		return
	}
	a := newArena(max(2*cap(t.mid), len(t.mid)+n, want))
	b := a.b[:len(t.mid)]
	copy(b, t.mid)
	old := t.midMem
	t.mid, t.midMem = b, a
	old.free()
}

// midSlack is the room for more codes an arena of middle parts sized for
// codes codes gets: unused room costs address space, not memory (the
// arena's pages are mapped as they are first written).
func midSlack(codes int) int { return codes/16 + 64 }
