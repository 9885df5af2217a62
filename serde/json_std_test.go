package serde

// The decoder memvault used before its own parser: encoding/json with
// UseNumber, then a revival pass. Kept for differential fuzzing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

func decodeJSONStd(data []byte) (any, error) {
	v, err := parseJSONStd(data)
	if err != nil && (bytes.Contains(data, []byte("NaN")) || bytes.Contains(data, []byte("Infinity"))) {
		if fixed, ok := replaceNonFinite(data); ok {
			v, err = parseJSONStd(fixed)
		}
	}
	if err != nil {
		return nil, err
	}
	return reviveStd(v, 0)
}

func parseJSONStd(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: json: %v", ErrMalformed, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: json: data after the value", ErrMalformed)
	}
	return v, nil
}

// replaceNonFinite rewrites bare NaN / Infinity / -Infinity tokens outside
// strings.
func replaceNonFinite(data []byte) ([]byte, bool) {
	var out []byte
	changed := false
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(data) {
					i++
					out = append(out, data[i])
				}
			case '"':
				inStr = false
			}
			continue
		}
		var tok, arg string
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			tok, arg = "NaN", "nan"
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			tok, arg = "Infinity", "inf"
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			tok, arg = "-Infinity", "-inf"
		}
		if tok == "" {
			out = append(out, c)
			continue
		}
		out = append(out, `{"lc":2,"type":"constructor","id":["builtins","float"],"method":null,"args":["`+arg+`"],"kwargs":{}}`...)
		i += len(tok) - 1
		changed = true
	}
	return out, changed
}

// revive converts encoding/json's generic values: numbers to int64 /
// uint64 / *big.Int / float64, and lc records to Go values.
func reviveStd(v any, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x))
	case []any:
		for i, e := range x {
			r, err := reviveStd(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
		return x, nil
	case map[string]any:
		for k, e := range x {
			r, err := reviveStd(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
		if _, ok := x["lc"]; ok {
			return reviveLC(x)
		}
		return x, nil
	}
	return v, nil
}
