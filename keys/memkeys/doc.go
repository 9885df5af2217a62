// Package memkeys is an in-process keys.Table, for tests and for programs
// whose data is in memory too: its keys die with the process.
package memkeys
