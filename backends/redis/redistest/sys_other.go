//go:build !linux

package redistest

import "syscall"

// sysProcAttr: only Linux can tie the server's life to the test's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
