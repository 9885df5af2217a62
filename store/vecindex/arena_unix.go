//go:build unix

package vecindex

import "syscall"

// allocOffHeap maps n bytes of anonymous memory (zeroed); off is false
// when it falls back to the heap.
func allocOffHeap(n int) (b []byte, off bool) {
	if n <= 0 {
		return nil, false
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), false
	}
	return b, true
}

// freeOffHeap unmaps what allocOffHeap mapped.
func freeOffHeap(b []byte) { _ = syscall.Munmap(b) }
