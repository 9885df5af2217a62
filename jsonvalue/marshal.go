package jsonvalue

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the JSON text of v after mapping it onto the model (see
// Canonical): object keys sorted, no insignificant space, and every float
// written with a fraction or an exponent so that it reads back as a float
// from SQLite text, from PostgreSQL's jsonb (which reprints numbers in
// fixed notation) and from Python.
func Marshal(v any) ([]byte, error) { return Append(nil, v) }

// Append appends the JSON text of v (see Marshal) to b.
func Append(b []byte, v any) ([]byte, error) {
	return appendValue(b, v, 0)
}

func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupported, MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if !utf8.ValidString(x) {
			return b, errInvalidUTF8(x)
		}
		return AppendString(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		return appendFloat(b, positiveZero(x)) // the model's one zero
	case *big.Int:
		if x == nil {
			return append(b, "null"...), nil
		}
		return x.Append(b, 10), nil
	case []byte:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendBytes(b, x), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		var buf [16]string // most objects' keys sort on the stack
		keys := buf[:0]
		for k := range x {
			if !utf8.ValidString(k) {
				return b, errInvalidUTF8Key(k)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, x[k], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	c, err := canonical(v, depth)
	if err != nil {
		return b, err
	}
	return appendValue(b, c, depth)
}

// appendFloat writes f so that it reads back as a float64 everywhere:
// integral values in fixed notation with ".0" (jsonb prints 1e21 as
// "1000000000000000000000" but keeps the scale of
// "1000000000000000000000.0"), tiny ones with an exponent (jsonb prints
// them with a fraction), the rest as the shortest decimal that round-trips.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%w: %v is not a JSON number", ErrUnsupported, f)
	}
	switch a := math.Abs(f); {
	case f == math.Trunc(f):
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
		return append(b, ".0"...), nil
	case a < 1e-6:
		return strconv.AppendFloat(b, f, 'e', -1, 64), nil
	default:
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
}

// AppendString appends s as a JSON string: UTF-8 kept as it is (like
// Python's ensure_ascii=False), '"', '\\' and control characters escaped,
// U+2028 and U+2029 escaped as encoding/json does (so the text is valid
// JavaScript too), and invalid UTF-8 replaced by U+FFFD. (Marshal refuses
// invalid UTF-8 before it gets here; serde's encoders share this function.)
func AppendString(b []byte, s string) []byte { return appendString(b, s, 0) }

// AppendStringWithin is AppendString when the result fits in b's
// capacity: it appends s to b, never growing it, and returns it with
// true; when it would not fit, it returns b as it was, nothing written
// past its length, and false. For a caller that must not let a string
// outgrow its buffer unseen (serde's encoders, whose buffers hold
// plaintext, wipe an array they outgrow): it counts what it appends
// (StringLen) only when the room is short of the worst case, and scans
// a plain string once, where StringLen then AppendString scan it twice.
func AppendStringWithin(b []byte, s string) ([]byte, bool) {
	room := cap(b) - len(b)
	if room >= 6*len(s)+2 { // a byte takes at most six ("\u00xx")
		return appendString(b, s, 0), true
	}
	if room < len(s)+2 {
		return b, false
	}
	i := plainRun(s, 0)
	if i+StringLen(s[i:]) > room {
		return b, false
	}
	return appendString(b, s, i), true
}

// appendString is AppendString for a string whose bytes before plain
// are known to be plain (plainRun's).
func appendString(b []byte, s string, plain int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := plain; i < len(s); {
		// Eight bytes at a time while none needs a look: most text is
		// printable ASCII without quotes or backslashes, and byte by
		// byte this loop was the largest flat cost of encoding a put.
		if i = plainRun(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// StringLen is len(AppendString(nil, s)), counted without writing: for
// a caller that sizes its buffer first, so that AppendString never grows
// it (serde's encoders, whose buffers hold plaintext, wipe an array they
// outgrow, which they cannot do for one grown inside AppendString).
func StringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); {
		if i = plainRun(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
			case c == '"', c == '\\', c == '\n', c == '\r', c == '\t':
				n++ // \x
			default:
				n += 5 // \u00xx
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5 // one byte as \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 3 // three bytes as \u202x
		}
		i += size
	}
	return n
}

// plainRun returns the end of the run of s from i, in whole words of 8
// bytes, whose bytes AppendString copies as they are: printable ASCII
// other than '"' and '\\' (none below 0x20, none 0x80 or above). Each
// test is the word-at-a-time "has a byte less than n"
// ((x - n·0x01…) &^ x & 0x80…, exact for n ≤ 0x80; a byte equal to c is
// a byte of x^c·0x01… less than 1), which may flag bytes above a hit but
// never flags a word without one.
func plainRun(s string, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q := x ^ ('"' * lsb)
		bs := x ^ ('\\' * lsb)
		if ((x-0x20*lsb)&^x|(q-lsb)&^q|(bs-lsb)&^bs|x)&msb != 0 {
			break
		}
	}
	return i
}

// Bytes travel in JSON as LangGraph's constructor record for Python's
// bytes (what its JsonPlusSerializer writes for them):
//
//	{"args":["<hex>"],"id":["builtins","bytes"],"lc":2,"method":"fromhex","type":"constructor"}
//
// Unmarshal turns exactly that shape back into []byte, as LangGraph does.
const bytesPrefix = `{"args":["`
const bytesSuffix = `"],"id":["builtins","bytes"],"lc":2,"method":"fromhex","type":"constructor"}`

func appendBytes(b, x []byte) []byte {
	b = append(b, bytesPrefix...)
	b = hex.AppendEncode(b, x)
	return append(b, bytesSuffix...)
}

// asBytes returns the bytes an object of the bytes record's shape holds.
func asBytes(m map[string]any) ([]byte, bool) {
	if len(m) != 5 || m["lc"] != json.Number("2") || m["type"] != "constructor" || m["method"] != "fromhex" {
		return nil, false
	}
	id, ok := m["id"].([]any)
	if !ok || len(id) != 2 || id[0] != "builtins" || id[1] != "bytes" {
		return nil, false
	}
	args, ok := m["args"].([]any)
	if !ok || len(args) != 1 {
		return nil, false
	}
	h, ok := args[0].(string)
	if !ok {
		return nil, false
	}
	out, err := hex.DecodeString(h)
	if err != nil {
		return nil, false
	}
	return out, true
}

// Unmarshal parses one JSON value into the model. Text after the value, a
// number beyond float64 that is not an integer, and nesting deeper than
// MaxDepth are errors.
func Unmarshal(data []byte) (any, error) { return unmarshal(data, 0) }

func unmarshal(data []byte, depth int) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("jsonvalue: data after the JSON value")
	}
	return numbers(v, depth)
}

// numbers replaces the json.Numbers of a freshly decoded value in place.
func numbers(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", ErrUnsupported, MaxDepth)
	}
	switch x := v.(type) {
	case json.Number:
		return Number(x)
	case map[string]any:
		if b, ok := asBytes(x); ok {
			return b, nil
		}
		for k, e := range x {
			switch e.(type) {
			case json.Number, map[string]any, []any:
				n, err := numbers(e, depth+1)
				if err != nil {
					return nil, err
				}
				x[k] = n
			}
		}
	case []any:
		for i, e := range x {
			switch e.(type) {
			case json.Number, map[string]any, []any:
				n, err := numbers(e, depth+1)
				if err != nil {
					return nil, err
				}
				x[i] = n
			}
		}
	}
	return v, nil
}
