package sqlitesaver

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used. On a shared
// machine it measures a benchmark's cost better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
