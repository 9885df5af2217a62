package serde

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/serde/pyvalue"
)

// decodeJSON parses a "json" payload into Go values; see JSONPlus for the
// types produced.
func decodeJSON(data []byte) (any, error) { return parseJSONValue(data) }

func parseNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return b, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("%w: json: a number of %d bytes", ErrMalformed, len(s))
	}
	return f, nil
}

var errTooDeep = fmt.Errorf("%w: nested deeper than %d", ErrMalformed, MaxDepth)

// reviveLC turns an object with an "lc" key into a Go value. Objects that do
// not have the shape of a LangChain / LangGraph record stay maps.
func reviveLC(m map[string]any) (any, error) {
	lc, _ := m["lc"].(int64)
	typ, _ := m["type"].(string)
	if lc == 2 {
		switch typ {
		case "undefined":
			return nil, nil
		case "delta_snapshot":
			return pyvalue.DeltaSnapshot{Value: m["value"]}, nil
		}
	}
	if (lc != 1 && lc != 2) || typ == "" {
		return m, nil
	}
	idList, ok := m["id"].([]any)
	if !ok {
		return m, nil
	}
	id := make([]string, len(idList))
	for i, s := range idList {
		if id[i], ok = s.(string); !ok {
			return m, nil
		}
	}
	c := pyvalue.Constructor{LC: int(lc), Type: typ, ID: id}
	extra := func(k string, v any) {
		if c.Extra == nil {
			c.Extra = map[string]any{}
		}
		c.Extra[k] = v
	}
	for k, v := range m {
		switch k {
		case "lc", "type", "id":
		case "method":
			// Python wrote pydantic v2 models with method
			// [null, "model_construct"]; such values are kept in Extra.
			switch x := v.(type) {
			case string:
				c.Method = x
			case nil:
			default:
				extra(k, v)
			}
		case "args":
			if a, ok := v.([]any); ok {
				c.Args = a
			} else {
				extra(k, v)
			}
		case "kwargs":
			if kw, ok := v.(map[string]any); ok {
				c.Kwargs = kw
			} else {
				extra(k, v)
			}
		default:
			extra(k, v)
		}
	}
	if lc == 2 && typ == "constructor" && len(c.Extra) == 0 {
		return nativeConstructor(c)
	}
	return c, nil
}

// nativeConstructor maps the lc:2 records of well-known classes to Go
// values; other records stay Constructors.
func nativeConstructor(c pyvalue.Constructor) (any, error) {
	path := c.Path()
	var arg any
	oneArg := len(c.Args) == 1 && len(c.Kwargs) == 0
	if oneArg {
		arg = c.Args[0]
	}
	s, isStr := arg.(string)
	switch {
	case path == "datetime.datetime" && c.Method == "fromisoformat" && isStr:
		if t, err := parseISO(s); err == nil {
			return t, nil
		}
	case path == "uuid.UUID" && c.Method == "" && isStr:
		if u, err := pyvalue.ParseUUID(s); err == nil {
			return u, nil
		}
	case path == "decimal.Decimal" && c.Method == "" && isStr:
		return pyvalue.Decimal(s), nil
	case (path == "builtins.set" || path == "Set") && c.Method == "" && (oneArg || len(c.Args) == 0 && len(c.Kwargs) == 0):
		if arg == nil {
			return pyvalue.Set{}, nil
		}
		if a, ok := arg.([]any); ok {
			return pyvalue.Set(a), nil
		}
	case path == "builtins.float" && c.Method == "" && isStr:
		switch strings.ToLower(s) {
		case "nan":
			return math.NaN(), nil
		case "inf", "infinity", "+inf":
			return math.Inf(1), nil
		case "-inf", "-infinity":
			return math.Inf(-1), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	case (path == "builtins.bytes" || path == "builtins.bytearray") && c.Method == "fromhex" && isStr:
		if b, err := hex.DecodeString(strings.ReplaceAll(s, " ", "")); err == nil {
			return b, nil
		}
	case path == "Uint8Array" && (c.Method == "from" || c.Method == "") && oneArg:
		if b, ok := intsToBytes(arg); ok {
			return b, nil
		}
	case path == "Map" && c.Method == "" && (oneArg || len(c.Args) == 0 && len(c.Kwargs) == 0):
		if m, ok := pairsToMap(arg); ok {
			return m, nil
		}
	}
	if t, ok := registeredType(path); ok && c.Method == "" && len(c.Args) == 0 {
		return fromFields(t, c.Kwargs)
	}
	return c, nil
}

func intsToBytes(v any) ([]byte, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	b := make([]byte, len(a))
	for i, x := range a {
		n, ok := x.(int64)
		if !ok || n < 0 || n > 255 {
			return nil, false
		}
		b[i] = byte(n)
	}
	return b, true
}

// pairsToMap converts JS Map entries [[k, v], ...] to map[any]any.
func pairsToMap(v any) (map[any]any, bool) {
	out := map[any]any{}
	if v == nil {
		return out, true
	}
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, p := range a {
		kv, ok := p.([]any)
		if !ok || len(kv) != 2 || !hashable(kv[0]) {
			return nil, false
		}
		out[kv[0]] = kv[1]
	}
	return out, true
}

// hashable reports whether v can be a Go map key without panicking.
func hashable(v any) bool {
	switch v.(type) {
	case nil, bool, int64, uint64, float64, string, pyvalue.UUID, pyvalue.Decimal, time.Time:
		return true
	}
	return false
}

// parseISO parses what Python's datetime.isoformat() writes. A value
// without an offset (a naive datetime) is taken as UTC. An offset of zero
// gives a time in time.UTC; any other offset a time.FixedZone.
func parseISO(s string) (time.Time, error) {
	for _, layout := range []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999Z07:00:00",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999",
	} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if _, off := t.Zone(); off == 0 {
			return t.UTC(), nil
		}
		_, off := t.Zone()
		return t.In(time.FixedZone("", off)), nil
	}
	// Its length, never its text: a decoded value's text is plaintext.
	return time.Time{}, fmt.Errorf("%w: bad isoformat datetime of %d bytes", ErrMalformed, len(s))
}

// fromFields builds a registered struct type from its fields.
func fromFields(t reflect.Type, kw map[string]any) (any, error) {
	v := reflect.New(t).Elem()
	if err := assign(v, kw, 0); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, t, err)
	}
	return v.Interface(), nil
}
