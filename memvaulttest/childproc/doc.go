// Package childproc runs the other processes of a test: the running test
// binary started again to run one test function of its package as a
// child — a writer killed with SIGKILL in the middle, a reader holding a
// transaction open while the parent erases, a second process racing the
// first. Every kill -9 and two-process test of memvault is built on it, so
// the mechanics (which test runs, how its argument arrives, how its lines
// reach the parent, that it is killed and reaped when the test ends) live
// once.
//
// The parent calls Start with the child test's name and an argument
// (JSON in the child's environment); the child test calls Arg first and
// skips itself when it returns false, so that an ordinary `go test` run
// passes over it. The child reports with Say (one flushed line of its
// standard output per call), which the parent reads from Child.Lines;
// closing the child's standard input (Child.CloseStdin) is the parent's
// signal to it (StdinClosed). A parent that drives its child step by step
// sends it commands, one line each (Child.Send), which the child reads in
// order from Commands and answers with Say.
package childproc
