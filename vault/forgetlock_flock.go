//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// haveFlock: a SQLite database has an erasure lock here.
const haveFlock = true

// fileForgetLock is an flock(2) lock on a file beside the SQLite database:
// the kernel drops it when its holder dies. It is held by the open file,
// so a second Handle of the same process waits for it too. (An flock lock,
// not SQLite's fcntl ones: closing a descriptor of the database itself
// would drop the process's SQLite locks.)
type fileForgetLock struct{ path string }

// take opens the lock file and locks it, waiting when wait, and reports
// whether it did. The file is opened without following a symbolic link
// and must be a regular file: a link planted at its name would otherwise
// have the lock taken on a file of the planter's choosing, which they
// could hold from outside (TestReviewS25bLockFileSymlinkFollowed).
func (l fileForgetLock) take(ctx context.Context, wait bool) (*heldLock, bool, error) {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("vault: the erasure lock %s (it must be a regular file, not a link): %w", l.path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, false, fmt.Errorf("vault: the erasure lock %s is not a regular file: remove it", l.path)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			var once sync.Once
			return &heldLock{
				release: func() { once.Do(func() { _ = f.Close() }) },
				check:   func(context.Context) error { return l.same(f) },
			}, true, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
		}
		if !wait {
			_ = f.Close()
			return nil, false, nil
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, false, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// same fails unless f, the locked file, is still the file at the lock's
// path: one removed or replaced lets another process lock another file.
func (l fileForgetLock) same(f *os.File) error {
	held, err := f.Stat()
	if err != nil {
		return err
	}
	now, err := os.Lstat(l.path)
	if err != nil {
		return err
	}
	if !os.SameFile(held, now) {
		return fmt.Errorf("%s was replaced", l.path)
	}
	return nil
}

func (l fileForgetLock) lock(ctx context.Context) (*heldLock, error) {
	held, _, err := l.take(ctx, true)
	return held, err
}

func (l fileForgetLock) tryLock(ctx context.Context) (*heldLock, bool, error) {
	return l.take(ctx, false)
}
