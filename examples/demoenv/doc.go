// Package demoenv is what the framework examples share: where their
// database goes (MEMVAULT_DB, or a file in a temporary directory removed
// afterwards) and a configuration on the embedded default that is always
// encrypted (LANGGRAPH_AES_KEY, or a demo key when it is unset), so each
// example's own code is about its framework.
//
// It exists for memvault's examples, and is exported only because each
// framework example is a module of its own; it is not meant for other
// callers.
package demoenv
