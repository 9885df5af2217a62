//go:build !linux

package core_test

import "time"

// cpuTime is 0 where getrusage is not used: the cpu-µs/op metric then
// reads 0.
func cpuTime() time.Duration { return 0 }
