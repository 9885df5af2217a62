// Package readmetest lets a test run a Go snippet of the repository's
// README: the test quotes the snippet's lines (in order, other lines
// between them allowed) in one of its functions, runs them with the
// environment a deployment exports (MEMVAULT_DB on a fresh file,
// LANGGRAPH_AES_KEY), and checks that the files hold nothing it stored in
// clear. Quoted fails the test when the README's snippet and the test's
// function drift apart, so the README shows code that compiles and runs.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package readmetest
