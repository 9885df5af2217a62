package serde

import (
	"fmt"
	"math"
	"math/big"
	"reflect"

	"github.com/memvault/memvault/serde/pyvalue"
)

// assign stores the decoded generic value src into dst, converting numbers
// (with overflow checks), slices, maps and structs (by field name) to dst's
// type. It is how registered structs come back as their Go type.
// assign's errors name types, field names and indexes, never what src
// holds: it is a decoded value (plaintext), and errors reach logs.
func assign(dst reflect.Value, src any, depth int) error {
	if depth > MaxDepth {
		return errTooDeep
	}
	t := dst.Type()
	if src == nil {
		dst.SetZero()
		return nil
	}
	sv := reflect.ValueOf(src)
	if sv.Type().AssignableTo(t) {
		dst.Set(sv)
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := assign(p.Elem(), src, depth+1); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Interface:
		return fmt.Errorf("cannot store %T in %s", src, t)
	case reflect.Bool:
		if b, ok := src.(bool); ok {
			dst.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		switch x := src.(type) {
		case int64:
			i = x
		case uint64:
			if x > math.MaxInt64 {
				return fmt.Errorf("a number overflows %s", t)
			}
			i = int64(x)
		case float64:
			if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
				return fmt.Errorf("a number does not fit %s", t)
			}
			i = int64(x)
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		if dst.OverflowInt(i) {
			return fmt.Errorf("a number overflows %s", t)
		}
		dst.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var u uint64
		switch x := src.(type) {
		case int64:
			if x < 0 {
				return fmt.Errorf("a number overflows %s", t)
			}
			u = uint64(x)
		case uint64:
			u = x
		case float64:
			if x != math.Trunc(x) || x < 0 || x >= math.MaxUint64 {
				return fmt.Errorf("a number does not fit %s", t)
			}
			u = uint64(x)
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		if dst.OverflowUint(u) {
			return fmt.Errorf("a number overflows %s", t)
		}
		dst.SetUint(u)
		return nil
	case reflect.Float32, reflect.Float64:
		switch x := src.(type) {
		case float64:
			dst.SetFloat(x)
		case int64:
			dst.SetFloat(float64(x))
		case uint64:
			dst.SetFloat(float64(x))
		case *big.Int:
			f, _ := new(big.Float).SetInt(x).Float64()
			dst.SetFloat(f)
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		return nil
	case reflect.String:
		if sv.Kind() == reflect.String {
			dst.SetString(sv.String())
			return nil
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if b, ok := src.([]byte); ok {
				dst.SetBytes(append([]byte(nil), b...))
				return nil
			}
		}
		var items []any
		switch x := src.(type) {
		case []any:
			items = x
		case pyvalue.Set:
			items = x
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, it := range items {
			if err := assign(s.Index(i), it, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		dst.Set(s)
		return nil
	case reflect.Array:
		var items []any
		switch x := src.(type) {
		case []any:
			items = x
		case []byte:
			items = make([]any, len(x))
			for i, c := range x {
				items[i] = int64(c)
			}
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		if len(items) != t.Len() {
			return fmt.Errorf("%d elements for %s", len(items), t)
		}
		for i, it := range items {
			if err := assign(dst.Index(i), it, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case reflect.Map:
		m := reflect.MakeMap(t)
		put := func(k, v any) error {
			kv := reflect.New(t.Key()).Elem()
			if err := assign(kv, k, depth+1); err != nil {
				return fmt.Errorf("a key: %w", err)
			}
			vv := reflect.New(t.Elem()).Elem()
			if err := assign(vv, v, depth+1); err != nil {
				return fmt.Errorf("a value (of type %T key): %w", k, err)
			}
			m.SetMapIndex(kv, vv)
			return nil
		}
		switch x := src.(type) {
		case map[string]any:
			for k, v := range x {
				if err := put(k, v); err != nil {
					return err
				}
			}
		case map[any]any:
			for k, v := range x {
				if err := put(k, v); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("cannot store %T in %s", src, t)
		}
		dst.Set(m)
		return nil
	case reflect.Struct:
		fields, ok := src.(map[string]any)
		if !ok {
			if o, isObj := src.(pyvalue.PyObject); isObj && o.Fields() != nil {
				fields = o.Fields()
			} else if c, isC := src.(pyvalue.Constructor); isC && c.Kwargs != nil {
				fields = c.Kwargs
			} else {
				return fmt.Errorf("cannot store %T in %s", src, t)
			}
		}
		for _, f := range structFields(t) {
			v, ok := fields[f.name]
			if !ok {
				continue
			}
			fv, err := fieldByIndexAlloc(dst, f.index)
			if err != nil {
				return err
			}
			if err := assign(fv, v, depth+1); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	}
	if sv.Type().ConvertibleTo(t) && sv.Kind() == t.Kind() {
		dst.Set(sv.Convert(t))
		return nil
	}
	return fmt.Errorf("cannot store %T in %s", src, t)
}

func fieldByIndexAlloc(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	if !v.CanSet() {
		return v, fmt.Errorf("field not settable")
	}
	return v, nil
}
