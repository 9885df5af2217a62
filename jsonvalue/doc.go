// Package jsonvalue is memvault's JSON value model: the one Go type each
// JSON value has when it comes back from any store backend, from checkpoint
// metadata and from the CLI, plaintext or encrypted.
//
// The model is:
//
//	JSON                       Go
//	null                       nil
//	true, false                bool
//	string                     string (valid UTF-8)
//	integer in int64           int64
//	integer in (2^63, 2^64)    uint64
//	any larger integer         *big.Int
//	number with . or exponent  float64 (5.0 stays float64, never int64)
//	bytes record (see below)   []byte
//	array                      []any
//	object                     map[string]any
//
// Canonical converts any Go value a caller hands memvault into the model,
// once, before a backend sees it: every integer kind becomes int64 (uint64 or
// *big.Int beyond), float32 becomes the float64 of its shortest decimal (as
// JSON carries it), -0.0 becomes 0.0 (PostgreSQL's jsonb has no negative
// zero, so the model has one zero), json.Number becomes the type its literal names, []byte
// (and named byte slices) stays []byte, and structs, typed maps and slices
// go through encoding/json, as they always have. NaN, infinities, invalid UTF-8,
// channels and functions are refused with ErrUnsupported rather than
// silently changed.
//
// Marshal writes model values so that the type survives every store:
// integral floats keep a fractional part in fixed notation ("5.0",
// "1000000000000000000000.0"), because PostgreSQL's jsonb prints numbers in
// fixed notation and would otherwise turn 1e21 into an integer. Unmarshal
// reads JSON text back into the model. JSON has no bytes: Marshal writes
// them as the record LangGraph's JsonPlusSerializer writes for Python's
// bytes, {"lc":2,"type":"constructor","id":["builtins","bytes"],
// "method":"fromhex","args":["<hex>"]}, and Unmarshal turns exactly that
// shape back into []byte (so, as in LangGraph, a map of that exact shape
// comes back as bytes). Diff compares two model values
// strictly (same types, same values); the conformance suites use it.
package jsonvalue
