//go:build race

package serde

// raceEnabled: the race detector's instrumentation allocates on its own,
// so allocation counts are not the code's.
const raceEnabled = true
