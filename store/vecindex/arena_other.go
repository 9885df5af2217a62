//go:build !unix

package vecindex

// allocOffHeap allocates n bytes on the heap: off the heap only on unix
// (arena_unix.go).
func allocOffHeap(n int) (b []byte, off bool) { return make([]byte, n), false }

// freeOffHeap does nothing: nothing is off the heap here.
func freeOffHeap([]byte) {}
