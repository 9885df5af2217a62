package sqlitestore

import (
	"os"
	"syscall"
	"unsafe"
)

// residentShare is the share of the file at path whose pages are in the
// operating system's page cache (mincore over a read-only mapping of it,
// unmapped before it returns; the mapping reads nothing), and whether it
// could tell.
func residentShare(path string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 || int64(int(fi.Size())) != fi.Size() {
		return 0, false
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, false
	}
	defer syscall.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, false
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n) / float64(len(vec)), true
}
