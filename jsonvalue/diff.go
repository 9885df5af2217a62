package jsonvalue

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"time"
)

// Diff returns "" when got is want with the same Go types throughout, else
// a description of the first difference and where it is ("$.a[2]"). Maps
// must both be map[string]any, lists []any; *big.Int compare by value,
// float64 by value and sign (NaN equals NaN, -0.0 differs from 0.0), []byte by content, time.Time as
// instants with the same location offset; any other type by
// reflect.DeepEqual. It is the strict comparison of the conformance suites.
func Diff(want, got any) string { return diffAt("$", want, got) }

func diffAt(path string, want, got any) string {
	if reflect.TypeOf(want) != reflect.TypeOf(got) {
		return fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if (w == nil) != (g == nil) {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s.%s: missing, want %s", path, k, show(w[k]))
			}
			if d := diffAt(path+"."+k, w[k], gv); d != "" {
				return d
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s.%s: unexpected %s", path, k, show(g[k]))
			}
		}
		return ""
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			return fmt.Sprintf("%s: got %d elements, want %d (got %s)", path, len(g), len(w), show(g))
		}
		for i := range w {
			if d := diffAt(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	case *big.Int:
		g := got.(*big.Int)
		if (w == nil && g == nil) || (w != nil && g != nil && w.Cmp(g) == 0) {
			return ""
		}
	case float64:
		g := got.(float64)
		if (w == g && math.Signbit(w) == math.Signbit(g)) || (math.IsNaN(w) && math.IsNaN(g)) {
			return ""
		}
	case []byte:
		if bytes.Equal(w, got.([]byte)) {
			return ""
		}
	case time.Time:
		g := got.(time.Time)
		_, wo := w.Zone()
		_, gofs := g.Zone()
		if w.Equal(g) && wo == gofs {
			return ""
		}
	default:
		if reflect.DeepEqual(want, got) {
			return ""
		}
	}
	return fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))
}

func show(v any) string {
	var s string
	if b, ok := v.(*big.Int); ok && b != nil {
		s = "*big.Int(" + b.String() + ")"
	} else {
		s = fmt.Sprintf("%T(%#v)", v, v)
	}
	if len(s) > 200 {
		s = s[:200] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
