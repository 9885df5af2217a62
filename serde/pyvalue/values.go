package pyvalue

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is wrapped by the errors of ParseUUID (and UUID's
// UnmarshalText) for text that is not a UUID.
var ErrMalformed = errors.New("pyvalue: malformed value")

// UUID is a 128-bit UUID (Python's uuid.UUID). Its JSON form is the lc:2
// constructor ["uuid","UUID"] with the 32-hex-digit string, its msgpack
// form ext 0 ["uuid","UUID", hex].
type UUID [16]byte

// String returns the canonical 8-4-4-4-12 form.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// MarshalText gives the canonical 8-4-4-4-12 form, so that encoding/json
// and every other text encoder print a UUID as people write it
// ("1ef4f797-8335-6428-8001-8a1503f9b875"), not as 16 numbers. (JSONPlus
// still writes its own constructor form, which Python revives as a UUID.)
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText parses what ParseUUID accepts.
func (u *UUID) UnmarshalText(b []byte) error {
	v, err := ParseUUID(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// Hex returns the 32 hex digits without dashes (Python's UUID.hex).
func (u UUID) Hex() string { return hex.EncodeToString(u[:]) }

// ParseUUID parses a UUID in canonical, braced, urn:uuid: or 32-hex form.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	t := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}"), "urn:uuid:")
	t = strings.ReplaceAll(t, "-", "")
	if len(t) != 32 {
		return u, fmt.Errorf("%w: bad UUID %q", ErrMalformed, s)
	}
	if _, err := hex.Decode(u[:], []byte(t)); err != nil {
		return u, fmt.Errorf("%w: bad UUID %q", ErrMalformed, s)
	}
	return u, nil
}

// Decimal is Python's decimal.Decimal, kept as its exact decimal text (for
// example "3.14", "-0", "NaN", "1E+2"). Encoded as the lc:2 constructor
// ["decimal","Decimal"] (JSON) or ext 0 (msgpack).
type Decimal string

// Set is a Python set or a JavaScript Set: distinct elements, order not
// significant. Encoded as the lc:2 constructor ["Set"] (JSON, as JS
// LangGraph writes it) or ext 0 ["builtins","set", [...]] (msgpack).
type Set []any

// Constructor is a LangChain/LangGraph constructor record read from JSON
// (lc:1, e.g. a LangChain message as langchain_core's dumpd writes it, or
// lc:2, LangGraph's JsonPlus form) whose class memvault has no Go type for.
// It keeps the class path and arguments and is written back unchanged.
type Constructor struct {
	// LC is the record's "lc" version: 1 or 2.
	LC int
	// Type is the record's "type": "constructor" or, for lc:1, "secret"
	// or "not_implemented".
	Type string
	// ID is the class path, e.g. ["langchain","schema","messages","AIMessage"]
	// or ["datetime","date"].
	ID []string
	// Method is the class method lc:2 calls instead of the class itself
	// (e.g. "fromisoformat"); "" for none (JSON null).
	Method string
	// Args are the positional arguments (lc:2); nil when absent.
	Args []any
	// Kwargs are the keyword arguments; nil when absent.
	Kwargs map[string]any
	// Extra holds the record's other keys (e.g. lc:1 "repr", "name",
	// "graph"), decoded.
	Extra map[string]any
}

// Path returns the class path joined with dots.
func (c Constructor) Path() string { return strings.Join(c.ID, ".") }

// Msgpack extension codes of LangGraph's JsonPlusSerializer.
const (
	ExtConstructorSingleArg = 0
	ExtConstructorPosArgs   = 1
	ExtConstructorKwArgs    = 2
	ExtMethodSingleArg      = 3
	ExtPydanticV1           = 4
	ExtPydanticV2           = 5
	ExtNumpyArray           = 6
	ExtDeltaSnapshot        = 7
)

// PyObject is a Python object read from msgpack (ext codes 0-5) whose class
// memvault has no Go type for: an Enum, a dataclass, a pydantic model, a
// LangChain message, a date, a timedelta, ... It keeps the module, class
// and arguments, and is written back (msgpack) byte-for-byte equivalent, so
// Python revives the same object.
type PyObject struct {
	// Ext is the extension code the object was written with (0-5).
	Ext int8
	// Module is the Python module, e.g. "langchain_core.messages.ai".
	Module string
	// Class is the class name, e.g. "AIMessage".
	Class string
	// Arg is the payload: the single argument (ext 0 and 3), the positional
	// arguments as []any (ext 1), or the fields as map[string]any (ext 2,
	// 4 and 5).
	Arg any
	// Method is the method named by ext 3 and 5 payloads (e.g.
	// "model_validate_json"); "" when absent.
	Method string
}

// Path returns "module.Class" (or "Class" without a module).
func (o PyObject) Path() string {
	if o.Module == "" {
		return o.Class
	}
	return o.Module + "." + o.Class
}

// Fields returns the object's fields (ext 2, 4, 5), or nil.
func (o PyObject) Fields() map[string]any {
	m, _ := o.Arg.(map[string]any)
	return m
}

// NumpyArray is a numpy ndarray read from msgpack ext 6.
type NumpyArray struct {
	// DType is numpy's dtype.str, e.g. "<f8".
	DType string
	// Shape is the array's shape.
	Shape []int64
	// Order is "C" or "F".
	Order string
	// Data is the raw buffer.
	Data []byte
}

// DeltaSnapshot is LangGraph's _DeltaSnapshot (msgpack ext 7; JSON
// {"lc":2,"type":"delta_snapshot","value":...}).
type DeltaSnapshot struct {
	Value any
}

// Ext is a msgpack extension value with a code LangGraph does not define;
// it is kept raw and written back unchanged.
type Ext struct {
	Code int8
	Data []byte
}
