package serde

import (
	"bytes"
	"errors"
	"reflect"
)

// JSONPlus is memvault's JsonPlus codec, compatible with LangGraph's
// JsonPlusSerializer (Python) and JsonPlusSerializer (JS). The zero value is
// ready to use and safe for concurrent use.
//
// # Writing
//
// DumpsTyped writes nil as tag "null" with an empty payload, a top-level
// []byte as tag "bytes" with the raw bytes, and everything else as tag
// "json", which Python and JS LangGraph both read. Maps are written with
// sorted keys, so equal values give equal bytes. Values plain JSON cannot
// carry are written as LangGraph lc:2 constructor records
// ({"lc":2,"type":"constructor","id":[...],"method":...,"args":[...],"kwargs":{...}}):
//
//	Go value                     id                     form
//	time.Time                    ["datetime","datetime"] method fromisoformat, args [isoformat]
//	[]byte (nested)              ["Uint8Array"]          method from, args [[0..255, ...]] (as JS writes)
//	NaN, +Inf, -Inf              ["builtins","float"]    args ["nan" | "inf" | "-inf"]
//	map with non-string keys     ["Map"]                 args [[[key, value], ...]] (as JS writes)
//	Set                          ["Set"]                 args [[...]] (as JS writes)
//	UUID                         ["uuid","UUID"]         args [32 hex digits]
//	Decimal                      ["decimal","Decimal"]   args [text]
//	registered struct (Register) name split at dots     kwargs {fields}
//	Constructor                  its own id              unchanged
//	PyObject                     module + class          the matching lc:2 record; LangChain
//	                                                     messages as lc:1 records
//	DeltaSnapshot                {"lc":2,"type":"delta_snapshot","value":...}
//
// Times are written as Python's isoformat with a "+HH:MM" offset; the
// instant and the offset survive, a time.Location's name does not.
// Unregistered structs are written as objects of their fields (encoding/json
// rules: `json` tags, omitempty, embedding). Types implementing
// json.Marshaler are written with it; named integer types such as
// time.Duration are written as integers. Channels, functions, complex
// numbers and strings (map keys too) that are not valid UTF-8 are
// ErrUnsupportedValue: JSON cannot carry such a string without replacing
// its bad bytes by U+FFFD, which would change the value silently, and
// LangGraph's msgpack readers refuse it (MsgPack refuses it too); binary
// data belongs in a []byte, which both keep exactly.
//
// # Reading
//
// LoadsTyped reads every tag LangGraph writes: "json", "msgpack" (Python's
// default; ext codes 0-7 and the msgpack timestamp), "bytes", "bytearray",
// "null" and "empty" (both nil). Any other tag is an error wrapping
// ErrUnknownType that names the tag; a payload that does not parse is
// ErrMalformed. Values come back as:
//
//	JSON / msgpack value                  Go value
//	null / nil                            nil
//	true / false                          bool
//	integer                               int64; uint64 above MaxInt64; *big.Int beyond (JSON only)
//	float (incl. NaN, ±Inf records)       float64
//	string                                string
//	msgpack bin, Uint8Array / bytes rec.  []byte
//	array                                 []any
//	object / map with string keys         map[string]any
//	map with other keys, JS Map record    map[any]any
//	datetime                              time.Time (naive: UTC; offset 0: time.UTC; else FixedZone)
//	uuid.UUID                             UUID
//	decimal.Decimal                       Decimal
//	set, JS Set                           Set
//	registered struct's record / ext 2,4,5 the registered type T
//	other lc:1 / lc:2 constructor record  Constructor
//	other msgpack ext 0-5 (enum, pydantic, PyObject
//	  dataclass, LangChain message, ...)
//	numpy array (ext 6)                   NumpyArray
//	delta snapshot (ext 7 / lc:2)         DeltaSnapshot
//	unknown msgpack ext code              Ext
//	{"lc":2,"type":"undefined"}           nil
//
// Python's bare NaN / Infinity / -Infinity JSON tokens are read as float64.
// JSON is parsed strictly (RFC 8259, no trailing data); duplicate keys keep
// the last value and invalid UTF-8 in strings becomes U+FFFD, as with
// encoding/json.
// Every type in the right column encodes back to the form it was read from,
// so a value read from Python and written again is revived identically.
type JSONPlus struct{}

// DumpsTyped implements Serializer, writing "json" (or "bytes" for a
// []byte). nil is written as the JSON text null under "json", not under
// Python's "null" tag: JS LangGraph reads only "json" and "bytes", and JS
// graphs write nil values all the time (branch channels); Python and
// memvault read both forms.
func (JSONPlus) DumpsTyped(v any) (string, []byte, error) {
	if b, ok := v.([]byte); ok {
		return TypeBytes, append([]byte{}, b...), nil // never a nil payload, even for empty bytes
	}
	// Encoded in a reused buffer and copied out at its final size: one
	// allocation, where growing a new slice took one per doubling (half
	// a dozen for a 1 KiB value) and copied the text each time.
	bp := scratch.Get().(*[]byte)
	pooled := (*bp)[:cap(*bp)]
	typ, data, err := appendJSONPlus((*bp)[:0], v)
	*bp = data // what was written, before an error too: wiped
	defer wipeEncoded(bp, pooled)
	if err != nil {
		return "", nil, err
	}
	return typ, bytes.Clone(data), nil
}

// LoadsTyped implements Serializer; see the type's documentation.
func (JSONPlus) LoadsTyped(typ string, data []byte) (any, error) {
	return loadsTyped(typ, data)
}

// MsgPack is JSONPlus writing "msgpack" instead of "json", byte-compatible
// with what Python's JsonPlusSerializer writes and revives (datetimes as ext
// 3, UUID / Decimal / Set as ext 0, registered structs as ext 2 like a
// dataclass, PyObject values with their own ext code). Use it for databases
// shared with Python only: JS LangGraph cannot read msgpack. It reads
// everything JSONPlus reads. The zero value is ready to use.
type MsgPack struct{}

// DumpsTyped implements Serializer, writing "msgpack" (or "null" / "bytes",
// or "json" for a value holding an integer wider than 64 bits, which msgpack
// cannot carry).
func (MsgPack) DumpsTyped(v any) (string, []byte, error) {
	switch x := v.(type) {
	case nil:
		return TypeNull, nil, nil
	case []byte:
		return TypeBytes, append([]byte{}, x...), nil
	}
	if isNilPointer(v) {
		return TypeNull, nil, nil
	}
	// In a reused buffer, copied out once (see JSONPlus.DumpsTyped).
	bp := scratch.Get().(*[]byte)
	pooled := (*bp)[:cap(*bp)]
	typ, data, err := appendMsgPack((*bp)[:0], v)
	*bp = data // what was written, before an error too: wiped
	defer wipeEncoded(bp, pooled)
	if err != nil {
		return "", nil, err
	}
	return typ, bytes.Clone(data), nil
}

// LoadsTyped implements Serializer; see JSONPlus.
func (MsgPack) LoadsTyped(typ string, data []byte) (any, error) {
	return loadsTyped(typ, data)
}

func loadsTyped(typ string, data []byte) (any, error) {
	switch typ {
	case TypeNull, TypeEmpty:
		return nil, nil
	case TypeBytes, TypeByteArray:
		return append([]byte{}, data...), nil
	case TypeJSON:
		return decodeJSON(data)
	case TypeMsgpack:
		return decodeMsgpack(data)
	}
	return nil, unknownType(typ)
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// isJSONPlus reports whether s is the JSONPlus codec.
func isJSONPlus(s Serializer) bool {
	switch s.(type) {
	case JSONPlus, *JSONPlus:
		return true
	}
	return false
}

// appendMsgPack is MsgPack.DumpsTyped appending the payload to dst, as
// appendJSONPlus is JSONPlus's ("null" is then an empty payload). A value
// msgpack cannot carry (an integer wider than 64 bits) is written as
// "json" instead, over the msgpack written so far, which is wiped first.
// On failure it returns, with the error, what it wrote, for the caller
// to wipe.
func appendMsgPack(dst []byte, v any) (string, []byte, error) {
	switch x := v.(type) {
	case nil:
		return TypeNull, dst, nil
	case []byte:
		return TypeBytes, append(dst, x...), nil
	}
	if isNilPointer(v) {
		return TypeNull, dst, nil
	}
	e := mpEncoder{b: dst}
	err := e.encode(v)
	if errors.Is(err, errIntBeyond64Bits) {
		// msgpack cannot carry it; "json" can, and Python's
		// JsonPlusSerializer reads "json" payloads too.
		clear(e.b[len(dst):])
		return appendJSONPlus(e.b[:len(dst)], v)
	}
	if err != nil {
		return "", e.b, err
	}
	return TypeMsgpack, e.b, nil
}

// appendJSONPlus is JSONPlus.DumpsTyped appending the payload to dst, for
// callers that reuse a buffer. On failure it returns, with the error,
// what it wrote (dst grown with a prefix of the plaintext), for the
// caller to wipe.
func appendJSONPlus(dst []byte, v any) (string, []byte, error) {
	switch x := v.(type) {
	case nil:
		return TypeJSON, append(dst, "null"...), nil
	case []byte:
		return TypeBytes, append(dst, x...), nil
	}
	if isNilPointer(v) {
		return TypeJSON, append(dst, "null"...), nil
	}
	e := jsonEncoder{b: dst}
	if err := e.encode(v); err != nil {
		return "", e.b, err
	}
	return TypeJSON, e.b, nil
}
