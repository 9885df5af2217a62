//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vault

import "context"

// fileForgetLock is no lock where flock(2) is missing: there Open finishes
// every intent not done, a live Forget's included (a second subject.erase
// record and a warning; nothing is lost).
type fileForgetLock struct{ path string }

func (fileForgetLock) lock(context.Context) (func(), error) { return func() {}, nil }

func (fileForgetLock) tryLock(context.Context) (func(), bool, error) { return func() {}, true, nil }
