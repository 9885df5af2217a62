package indexing

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// PythonJSON formats v as Python's json.dumps(v, sort_keys=True,
// ensure_ascii=False) does with its default separators (", " and ": "), so
// that Go and Python embed byte-identical texts. Integers print in decimal,
// floats as Python's repr ("1.0", "1e-05"). Values that are not JSON types
// (structs, typed slices and maps) are first converted through
// encoding/json.
func PythonJSON(v any) string {
	var b strings.Builder
	writePythonJSON(&b, v)
	return b.String()
}

func writePythonJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
		return
	case string:
		writePythonString(b, x)
		return
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			writePythonString(b, k)
			b.WriteString(": ")
			writePythonJSON(b, x[k])
		}
		b.WriteByte('}')
		return
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePythonJSON(b, e)
		}
		b.WriteByte(']')
		return
	}
	switch x := NormalizeScalar(v).(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writePythonString(b, x)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		b.WriteString(pyFloatRepr(x, 64))
	case float32:
		b.WriteString(pyFloatRepr(float64(x), 32))
	case json.Number:
		b.WriteString(pyNumber(x))
	case map[string]any, []any:
		writePythonJSON(b, x)
	default:
		b.WriteString("null")
	}
}

// NormalizeScalar maps Go numeric kinds onto int64, uint64, float32,
// float64 or json.Number, and any non-JSON type onto its encoding/json
// form (decoded with UseNumber). Strings, bools, nil, map[string]any and
// []any pass through.
func NormalizeScalar(v any) any {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, int64, uint64, map[string]any, []any:
		return v
	case float32:
		// The float64 JSON gives it (package jsonvalue), so a float32
		// filter operand equals the float32 that was stored.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f
	case *big.Int:
		if x == nil {
			return nil
		}
		return json.Number(x.String())
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return uint64(x)
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	}
	return viaJSON(v)
}

// viaJSON converts an arbitrary value to JSON types; values that do not
// marshal become nil.
func viaJSON(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// asMap returns v as a dict when it is one.
func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case nil, string, bool, []any, json.Number, float64, int, int64:
		return nil, false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map || rv.Kind() == reflect.Struct ||
		(rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct) {
		m, ok := viaJSON(v).(map[string]any)
		return m, ok
	}
	return nil, false
}

// asList returns v as a list when it is one.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case nil, string, bool, map[string]any, json.Number, float64, int, int64:
		return nil, false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		l, ok := viaJSON(v).([]any)
		return l, ok
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Byte order of UTF-8 is code point order, which is how Python sorts str.
	slices.Sort(keys)
	return keys
}

// writePythonString writes s as a JSON string the way Python's json module
// does with ensure_ascii=False: only '"', '\\' and control characters are
// escaped (\n, \r, \t, \b, \f by name, others as \u00XX).
func writePythonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// pyNumber formats a JSON number literal as Python would after json.loads:
// integers stay integers, anything with a fraction or exponent is a float.
func pyNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return strings.TrimLeft(s, "+") // big integers: Python keeps every digit
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return s
	}
	return pyFloatRepr(f, 64)
}

// pyFloatRepr formats f as Python's repr(float) does: the shortest digits
// that round-trip, fixed notation with at least one fractional digit when
// the decimal exponent is in [-4, 16), scientific notation ("1e-05",
// "1.5e+16") otherwise. bitSize 32 uses the shortest digits of a float32,
// as a Go float32 is written to JSON.
func pyFloatRepr(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, bitSize) // "-d.ddde±XX"
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if decpt <= -4 || decpt > 16 {
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
		return b.String()
	}
	switch {
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	}
	return b.String()
}
