//go:build !race

package examples_test

// raceFlags is empty without the race detector (see race_test.go).
var raceFlags []string
