package filtering

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
)

// Filter operators.
const (
	OpEq  = "$eq"
	OpNe  = "$ne"
	OpGt  = "$gt"
	OpGte = "$gte"
	OpLt  = "$lt"
	OpLte = "$lte"
)

// ValidateFilter checks a search filter without evaluating it: every value
// is either a literal (compared for JSON equality) or a non-empty object
// whose keys are all operators ($eq $ne $gt $gte $lt $lte); the ordering
// operators take a number or a string.
func ValidateFilter(filter map[string]any) error {
	for k, v := range filter {
		ops, isOps, err := operators(k, v)
		if err != nil {
			return err
		}
		if !isOps {
			if _, ok := jsonKind(v); !ok {
				return fmt.Errorf("%w: field %q: operand of type %T is not a JSON value", store.ErrInvalidFilter, k, v)
			}
			continue
		}
		for op, arg := range ops {
			if err := validateOp(k, op, arg); err != nil {
				return err
			}
		}
	}
	return nil
}

// operators reports whether v is an operator object. A map whose keys all
// start with '$' is one; a map mixing operators and plain keys, or an empty
// map, is rejected (compare objects with {"$eq": {...}}).
func operators(field string, v any) (map[string]any, bool, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, nil
	}
	if len(m) == 0 {
		return nil, false, fmt.Errorf("%w: field %q: empty operator object (use {\"$eq\": {}} to match an empty object)", store.ErrInvalidFilter, field)
	}
	for op := range m {
		if !strings.HasPrefix(op, "$") {
			return nil, false, fmt.Errorf("%w: field %q: %q is not an operator (use {\"$eq\": {...}} to match an object)", store.ErrInvalidFilter, field, op)
		}
	}
	return m, true, nil
}

func validateOp(field, op string, arg any) error {
	switch op {
	case OpEq, OpNe:
		if _, ok := jsonKind(arg); !ok {
			return fmt.Errorf("%w: field %q: %s operand of type %T is not a JSON value", store.ErrInvalidFilter, field, op, arg)
		}
		return nil
	case OpGt, OpGte, OpLt, OpLte:
		k, _ := jsonKind(arg)
		if k != kindNumber && k != kindString {
			return fmt.Errorf("%w: field %q: %s needs a number or a string, not %T", store.ErrInvalidFilter, field, op, arg)
		}
		if k == kindNumber {
			if f, ok := toFloat(arg); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return fmt.Errorf("%w: field %q: %s operand is not finite", store.ErrInvalidFilter, field, op)
			}
		}
		return nil
	default:
		return fmt.Errorf("%w: field %q: unknown operator %q", store.ErrInvalidFilter, field, op)
	}
}

// MatchFilter reports whether value satisfies filter. Keys are top-level
// field names taken literally ("a.b" is the key "a.b", not a path), as in
// LangGraph. A field missing from value never matches, whatever the
// condition (including $ne). Equality is JSON equality with numbers
// compared by value (1 equals 1.0). The ordering operators compare numbers
// as numbers and strings as strings (byte-wise, which is code point order);
// a field of another kind than the operand never matches.
//
// LangGraph's Postgres store evaluates $gt/$gte/$lt/$lte on the text form of
// the field (value->>'k' > '10'), so there 9 > 10 is true and a number can
// compare against a string; memvault's stores do not reproduce that.
//
// An invalid filter fails with ErrInvalidFilter whatever the value. To
// match many values, compile the filter once with CompileFilter.
func MatchFilter(value map[string]any, filter map[string]any) (bool, error) {
	f, err := CompileFilter(filter)
	if err != nil {
		return false, err
	}
	return f.Match(value), nil
}

// Filter is a validated search filter; see MatchFilter for its semantics.
// The zero Filter matches everything.
type Filter struct {
	conds []condition
}

type condition struct {
	field string
	op    string // OpEq for literals
	arg   any
}

// CompileFilter validates filter and returns its matcher.
func CompileFilter(filter map[string]any) (*Filter, error) {
	if err := ValidateFilter(filter); err != nil {
		return nil, err
	}
	f := &Filter{}
	for k, cond := range filter {
		ops, isOps, _ := operators(k, cond)
		if !isOps {
			f.conds = append(f.conds, condition{field: k, op: OpEq, arg: cond})
			continue
		}
		for op, arg := range ops {
			f.conds = append(f.conds, condition{field: k, op: op, arg: arg})
		}
	}
	return f, nil
}

// Match reports whether value satisfies the filter.
func (f *Filter) Match(value map[string]any) bool {
	if f == nil {
		return true
	}
	for _, c := range f.conds {
		fv, present := value[c.field]
		if !present || !matchOp(fv, c.op, c.arg) {
			return false
		}
	}
	return true
}

func matchOp(fv any, op string, arg any) bool {
	switch op {
	case OpEq:
		return JSONEqual(fv, arg)
	case OpNe:
		return !JSONEqual(fv, arg)
	}
	c, ok := compareOrdered(fv, arg)
	if !ok {
		return false
	}
	switch op {
	case OpGt:
		return c > 0
	case OpGte:
		return c >= 0
	case OpLt:
		return c < 0
	default: // OpLte
		return c <= 0
	}
}

// kind is a JSON type.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// jsonKind classifies v; ok is false for values that are not JSON types
// (after normalisation of Go numeric kinds and typed containers).
func jsonKind(v any) (kind, bool) {
	switch x := indexing.NormalizeScalar(v).(type) {
	case nil:
		return kindNull, v == nil || isNilPointer(v)
	case bool:
		return kindBool, true
	case string:
		return kindString, true
	case int64, uint64, json.Number:
		return kindNumber, true
	case float64:
		return kindNumber, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return kindNumber, !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
	case []any:
		return kindArray, true
	case map[string]any:
		return kindObject, true
	}
	return kindNull, false
}

// JSONEqual reports whether a and b are equal as JSON values: same kind,
// numbers equal by value, arrays element-wise, objects key-wise.
func JSONEqual(a, b any) bool {
	a, b = indexing.NormalizeScalar(a), indexing.NormalizeScalar(b)
	ka, oka := jsonKind(a)
	kb, okb := jsonKind(b)
	if !oka || !okb || ka != kb {
		return false
	}
	switch ka {
	case kindNull:
		return true
	case kindBool:
		return a.(bool) == b.(bool)
	case kindString:
		return a.(string) == b.(string)
	case kindNumber:
		return compareNumbers(a, b) == 0
	case kindArray:
		la, lb := a.([]any), b.([]any)
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !JSONEqual(la[i], lb[i]) {
				return false
			}
		}
		return true
	default:
		ma, mb := a.(map[string]any), b.(map[string]any)
		if len(ma) != len(mb) {
			return false
		}
		for k, va := range ma {
			vb, ok := mb[k]
			if !ok || !JSONEqual(va, vb) {
				return false
			}
		}
		return true
	}
}

// compareOrdered compares two numbers or two strings; ok is false for any
// other pair.
func compareOrdered(a, b any) (int, bool) {
	ka, _ := jsonKind(a)
	kb, _ := jsonKind(b)
	if ka != kb {
		return 0, false
	}
	switch ka {
	case kindNumber:
		if !finite(a) || !finite(b) {
			return 0, false
		}
		return compareNumbers(indexing.NormalizeScalar(a), indexing.NormalizeScalar(b)), true
	case kindString:
		return strings.Compare(indexing.NormalizeScalar(a).(string), indexing.NormalizeScalar(b).(string)), true
	}
	return 0, false
}

func finite(v any) bool {
	f, ok := toFloat(v)
	return !ok || (!math.IsNaN(f) && !math.IsInf(f, 0))
}

// toFloat converts a number to float64 (possibly rounding).
func toFloat(v any) (float64, bool) {
	switch x := indexing.NormalizeScalar(v).(type) {
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// exactFloat reports the float64 value of a normalised number when it is
// represented exactly.
func exactFloat(v any) (float64, bool) {
	const maxExact = 1 << 53
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), x >= -maxExact && x <= maxExact
	case uint64:
		return float64(x), x <= maxExact
	}
	return 0, false
}

// compareNumbers compares two normalised numbers exactly.
func compareNumbers(a, b any) int {
	if fa, ok := exactFloat(a); ok {
		if fb, ok := exactFloat(b); ok {
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return 0
		}
	}
	ra, rb := toRat(a), toRat(b)
	if ra == nil || rb == nil {
		fa, _ := toFloat(a)
		fb, _ := toFloat(b)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	return ra.Cmp(rb)
}

func toRat(v any) *big.Rat {
	r := new(big.Rat)
	switch x := v.(type) {
	case int64:
		return r.SetInt64(x)
	case uint64:
		return r.SetUint64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return r.SetFloat64(x)
	case float32:
		return r.SetFloat64(float64(x))
	case json.Number:
		if _, ok := r.SetString(string(x)); ok {
			return r
		}
	}
	return nil
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
