//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mongotest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// buildLockWait bounds how long a build waits for another binary's: a hung
// build elsewhere delays this one, never blocks it.
const buildLockWait = 15 * time.Minute

// lockBuild serialises the builds of ferretsrv among the test binaries of
// one user (go test runs packages in parallel): the first compiles FerretDB,
// a few minutes from a cold build cache, and the others wait and then only
// link, instead of compiling the same packages side by side. The lock file
// lives in the user's own cache directory, so another user cannot hold it.
// It returns the function that releases the lock; when the lock cannot be
// had (no cache directory, or buildLockWait passed), the build runs
// unserialised.
func lockBuild() (unlock func()) {
	nothing := func() {}
	dir, err := os.UserCacheDir()
	if err != nil {
		return nothing
	}
	dir = filepath.Join(dir, "memvault")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nothing
	}
	f, err := os.OpenFile(filepath.Join(dir, "ferretsrv-build.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nothing
	}
	deadline := time.Now().Add(buildLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() } // closing the file releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nothing
		}
		time.Sleep(200 * time.Millisecond)
	}
}
