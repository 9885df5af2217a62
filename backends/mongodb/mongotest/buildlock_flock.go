//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mongotest

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockBuild serialises the builds of ferretsrv among the test binaries of
// one machine (go test runs packages in parallel): the first compiles
// FerretDB, a few minutes from a cold build cache, and the others wait and
// then only link, instead of compiling the same packages side by side. It
// returns the function that releases the lock; when the lock file cannot be
// used, builds simply run unserialised.
func lockBuild() (unlock func()) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "memvault-ferretsrv-build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the file releases the lock
}
