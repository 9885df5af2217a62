package jsonvalue

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// ErrUnsupported reports a value the JSON value model cannot hold: NaN, an
// infinity, invalid UTF-8, a number beyond float64, a channel, a function,
// or nesting deeper than MaxDepth.
var ErrUnsupported = errors.New("jsonvalue: value JSON cannot hold")

// The errors name where invalid UTF-8 is by position, never by content:
// values are user data and errors end up in logs.
func errInvalidUTF8(s string) error {
	return fmt.Errorf("%w: a string of %d bytes is not valid UTF-8 (first bad byte at %d)", ErrUnsupported, len(s), firstInvalid(s))
}

func errInvalidUTF8Key(k string) error {
	return fmt.Errorf("%w: an object key of %d bytes is not valid UTF-8 (first bad byte at %d)", ErrUnsupported, len(k), firstInvalid(k))
}

func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
	}
	return -1
}

// MaxDepth bounds the nesting of objects and arrays, so that a cyclic or
// hostile value fails instead of exhausting the stack.
const MaxDepth = 10000

// Canonical returns a deep copy of v in the model (see the package
// documentation) that shares no memory with v.
func Canonical(v any) (any, error) { return canonical(v, 0) }

// CanonicalMap is Canonical for an object; nil stays nil.
func CanonicalMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	v, err := canonical(m, 0)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func canonical(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupported, MaxDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil), nil
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, errInvalidUTF8Key(k)
			}
			c, err := canonical(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		if x == nil {
			return []any(nil), nil
		}
		l := make([]any, len(x))
		for i, e := range x {
			c, err := canonical(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	}
	if s, ok, err := scalar(v); ok || err != nil {
		return s, err
	}
	return reflectValue(reflect.ValueOf(v), depth)
}

// Normalize is Canonical in place: it rewrites the leaves of the maps and
// slices of v that are not in the model and returns the result. It is for
// values a decoder has just built and nobody else holds; it allocates
// nothing when v is already canonical (a []byte is kept as it is).
func Normalize(v any) (any, error) { return normalize(v, 0) }

func normalize(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupported, MaxDepth)
	}
	switch x := v.(type) {
	case []byte:
		if x == nil {
			return nil, nil // as encoding/json writes a nil slice: null
		}
		return x, nil // a decoder's own copy: kept, not copied again
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return nil, errInvalidUTF8Key(k)
			}
			switch e.(type) {
			case string, int64, bool, nil:
				if s, ok := e.(string); ok && !utf8.ValidString(s) {
					return nil, errInvalidUTF8(s)
				}
				continue
			}
			c, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case []any:
		for i, e := range x {
			c, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	}
	if s, ok, err := scalar(v); ok || err != nil {
		return s, err
	}
	return reflectValue(reflect.ValueOf(v), depth)
}

// scalar maps a scalar of a known Go type onto the model. ok is false for
// types it does not know (structs, typed maps and slices, pointers).
func scalar(v any) (out any, ok bool, err error) {
	switch x := v.(type) {
	case nil, bool, int64, uint64:
		return v, true, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, true, errInvalidUTF8(x)
		}
		return x, true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, true, fmt.Errorf("%w: %v is not a JSON number", ErrUnsupported, x)
		}
		return positiveZero(x), true, nil
	case float32:
		f, err := float32To64(x)
		return f, true, err
	case int:
		return int64(x), true, nil
	case int8:
		return int64(x), true, nil
	case int16:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case uint:
		return fromUint(uint64(x)), true, nil
	case uint8:
		return int64(x), true, nil
	case uint16:
		return int64(x), true, nil
	case uint32:
		return int64(x), true, nil
	case uintptr:
		return fromUint(uint64(x)), true, nil
	case json.Number:
		n, err := Number(x)
		return n, true, err
	case *big.Int:
		if x == nil {
			return nil, true, nil
		}
		return fromBig(x), true, nil
	case []byte:
		if x == nil {
			return nil, true, nil // as encoding/json writes a nil slice: null
		}
		return append([]byte{}, x...), true, nil
	}
	return nil, false, nil
}

// float32To64 gives the float64 a float32 has in JSON: the one nearest its
// shortest decimal, so float32(0.1) is 0.1, not 0.10000000149011612.
func float32To64(x float32) (float64, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: %v is not a JSON number", ErrUnsupported, x)
	}
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	return positiveZero(f), nil
}

// positiveZero returns f with -0.0 made 0.0. PostgreSQL's jsonb (numeric)
// has no negative zero, so a sign kept elsewhere would make one value come
// back two ways; the model has one zero, as LangGraph's PostgreSQL savers
// store it.
func positiveZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

func fromUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return u
}

// fromBig returns b as int64 or uint64 when it fits, else a copy of b.
func fromBig(b *big.Int) any {
	switch {
	case b.IsInt64():
		return b.Int64()
	case b.IsUint64():
		return b.Uint64()
	}
	return new(big.Int).Set(b)
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// reflectValue maps values of other Go types onto the model: named scalar
// types by their kind, pointers by what they point to, string-keyed maps,
// slices and arrays element by element (so a map[string]float64 keeps its
// floats), and structs, Marshalers and other maps through encoding/json.
func reflectValue(rv reflect.Value, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupported, MaxDepth)
	}
	if !rv.IsValid() {
		return nil, nil
	}
	t := rv.Type()
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
		if t.Kind() == reflect.Pointer && rv.IsNil() {
			return nil, nil
		}
		return viaJSON(rv.Interface(), depth)
	}
	switch t.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fromUint(rv.Uint()), nil
	case reflect.Float32:
		return float32To64(float32(rv.Float()))
	case reflect.Float64:
		out, _, err := scalar(rv.Float())
		return out, err
	case reflect.String:
		out, _, err := scalar(rv.String())
		return out, err
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return canonical(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(jsonMarshalerType) && !t.Elem().Implements(textMarshalerType) {
			return append([]byte{}, rv.Bytes()...), nil // a named byte slice: bytes
		}
		l := make([]any, rv.Len())
		for i := range l {
			c, err := canonical(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	case reflect.Map:
		if rv.IsNil() {
			return nil, nil
		}
		if t.Key().Kind() != reflect.String {
			return viaJSON(rv.Interface(), depth)
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, errInvalidUTF8Key(k)
			}
			c, err := canonical(it.Value().Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	}
	return viaJSON(rv.Interface(), depth)
}

// viaJSON converts a value through encoding/json, as memvault always has
// for structs (by their json tags) and Marshalers (by their own text).
func viaJSON(v any, depth int) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: value of type %T: %v", ErrUnsupported, v, err)
	}
	out, err := unmarshal(b, depth)
	if err != nil {
		return nil, fmt.Errorf("%w: value of type %T: %v", ErrUnsupported, v, err)
	}
	return out, nil
}

// Number returns the model value of a JSON number literal: an integer
// literal (no fraction, no exponent) as int64, uint64 or *big.Int, any
// other number as float64. A literal that is not JSON, or a non-integer
// beyond float64's range, is ErrUnsupported.
func Number(n json.Number) (any, error) {
	s := string(n)
	if !validNumber(s) {
		return nil, fmt.Errorf("%w: a json.Number of %d bytes is not a JSON number", ErrUnsupported, len(s))
	}
	if !isIntegerLiteral(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			// Its length, never its digits: they are the value (and
			// unbounded), and errors reach logs.
			return nil, fmt.Errorf("%w: a number of %d bytes is beyond float64", ErrUnsupported, len(s))
		}
		return positiveZero(f), nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	b, _ := new(big.Int).SetString(s, 10) // validNumber checked the digits
	return b, nil
}

func isIntegerLiteral(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return true
}

// validNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Copy returns a deep copy of a value already in the model: maps, slices
// and *big.Int are copied, so that a caller mutating the result cannot
// change a cached or stored value. Values outside the model are shared.
func Copy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Copy(e)
		}
		return m
	case []any:
		if x == nil {
			return []any(nil)
		}
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = Copy(e)
		}
		return l
	case *big.Int:
		if x == nil {
			return x
		}
		return new(big.Int).Set(x)
	case []byte:
		if x == nil {
			return x
		}
		return append([]byte{}, x...)
	}
	return v
}
