// Package jsonvaluetest holds the type-fidelity cases every store backend
// and every checkpoint saver is held to: Go values in every numeric width,
// integers beyond 2^53 and 2^64, integral and extreme floats, json.Number
// literals, bytes, strings JSON and SQL treat specially, and nested and
// typed containers, each with the exact value of the JSON value model
// (package jsonvalue) it must come back as. The conformance suites in
// store/storetest and checkpointer/checkpointertest run them.
package jsonvaluetest
