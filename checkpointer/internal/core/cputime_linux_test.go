package core_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system, every thread's: the garbage
// collector's too) the process has used: on a shared machine it measures
// a benchmark's cost better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
