//go:build race

package examples_test

// raceFlags builds the examples with the race detector when the tests run
// with it, so that the libraries' code is checked under real use too.
var raceFlags = []string{"-race"}
