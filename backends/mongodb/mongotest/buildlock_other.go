//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mongotest

// lockBuild does nothing where flock(2) is not available: builds of
// ferretsrv by parallel test binaries then run side by side.
func lockBuild() (unlock func()) { return func() {} }
