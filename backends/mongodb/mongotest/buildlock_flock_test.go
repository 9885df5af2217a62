//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mongotest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLockBuildExcludesOthers: while one binary holds the build lock,
// another's attempt on the same file is refused, and after unlock it
// succeeds.
func TestLockBuildExcludesOthers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home) // Linux and BSDs
	t.Setenv("HOME", home)           // macOS: ~/Library/Caches
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	unlock := lockBuild()
	path := filepath.Join(dir, "memvault", "ferretsrv-build.lock")
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("lock file not made: %v", err)
	}
	defer other.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file %v, %v: want mode 0600", fi, err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second lock while the first is held: %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}
