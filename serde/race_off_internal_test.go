//go:build !race

package serde

// raceEnabled: see race_on_internal_test.go.
const raceEnabled = false
