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
// whether it did.
func (l fileForgetLock) take(ctx context.Context, wait bool) (func(), bool, error) {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("vault: the erasure lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			var once sync.Once
			return func() { once.Do(func() { _ = f.Close() }) }, true, nil
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

func (l fileForgetLock) lock(ctx context.Context) (func(), error) {
	unlock, _, err := l.take(ctx, true)
	return unlock, err
}

func (l fileForgetLock) tryLock(ctx context.Context) (func(), bool, error) {
	return l.take(ctx, false)
}
