//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vault

import "context"

// haveFlock is false where flock(2) is missing: there a SQLite database
// has no erasure lock (forgetLock returns nil), and Open finishes every
// intent not done, a live Forget's included (a second subject.erase
// record and a warning; nothing is lost).
const haveFlock = false

// fileForgetLock is never used without flock(2).
type fileForgetLock struct{ path string }

func (fileForgetLock) lock(context.Context) (*heldLock, error) { return nil, nil }

func (fileForgetLock) tryLock(context.Context) (*heldLock, bool, error) { return nil, true, nil }
