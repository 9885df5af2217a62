package checkpointertest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// Normalize maps a value onto the suite's value model: nil, bool, string,
// int64, float64 (non-integral only), []byte, time.Time (UTC),
// map[string]any and []any. See the package documentation.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool, string:
		return x
	case int64:
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return normFloat(f)
	case float64:
		return normFloat(x)
	case float32:
		return normFloat(float64(x))
	case []byte:
		if x == nil {
			return []byte{}
		}
		return x
	case time.Time:
		return x.UTC()
	case checkpointer.Metadata:
		return Normalize(map[string]any(x))
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Normalize(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = Normalize(e)
		}
		return s
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return normFloat(rv.Float())
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return Normalize(rv.Bytes())
		}
		s := make([]any, rv.Len())
		for i := range s {
			s[i] = Normalize(rv.Index(i).Interface())
		}
		return s
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = Normalize(it.Value().Interface())
		}
		return m
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return Normalize(rv.Elem().Interface())
	}
	return v
}

func normFloat(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return int64(f)
	}
	return f
}

// Equal reports whether got, a value read back from a saver, equals want
// under the suite's value model.
func Equal(want, got any) bool {
	return diff(Normalize(want), Normalize(got)) == ""
}

// diff returns "" when the normalised values are equal, else a description
// of the first difference.
func diff(want, got any) string {
	return diffAt("$", want, got)
}

func diffAt(path string, want, got any) string {
	switch w := want.(type) {
	case time.Time:
		switch g := got.(type) {
		case time.Time:
			if w.Equal(g) {
				return ""
			}
		case string:
			if t, err := time.Parse(time.RFC3339Nano, g); err == nil && w.Equal(t) {
				return ""
			}
		}
	case []byte:
		switch g := got.(type) {
		case []byte:
			if bytes.Equal(w, g) {
				return ""
			}
		case string:
			if b, err := base64.StdEncoding.DecodeString(g); err == nil && bytes.Equal(w, b) && path != "$" {
				return ""
			}
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
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
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(w) != len(g) {
			return fmt.Sprintf("%s: got %d elements, want %d (got %s)", path, len(g), len(w), show(g))
		}
		for i := range w {
			if d := diffAt(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if reflect.DeepEqual(want, got) {
			return ""
		}
	}
	return fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))
}

func show(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 200 {
		s = s[:200] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
