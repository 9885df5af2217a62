package redistest

import "syscall"

// sysProcAttr kills the server when the test process dies, so that a
// test binary killed by its time-out leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
