package durable

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/memvault/memvault/serde"
)

// maxCopyDepth bounds deepCopy's recursion, counted in maps, slices,
// arrays, pointers and structs (interfaces do not count): twice the
// nesting a serializer stores (serde.MaxDepth), so that every value a
// synchronous put would store is copied whole, and a deeper one (or a
// cycle) fails its put instead of being queued by reference.
const maxCopyDepth = 2 * serde.MaxDepth

// deepCopy copies v's maps, slices, arrays, pointers and the exported
// fields of its structs (those promoted from an embedded struct of an
// unexported type included), so that a queued write keeps the value its
// caller passed even if the caller changes it afterwards, as a synchronous
// put would have stored it. Channels, functions and other unexported
// fields are kept by reference. A value nested deeper than maxCopyDepth fails with
// serde.ErrUnsupportedValue.
func deepCopy[T any](v T) (T, error) {
	rv := reflect.ValueOf(&v).Elem()
	c, err := copyValue(rv, 0)
	if err != nil {
		var zero T
		return zero, err
	}
	rv.Set(c)
	return v, nil
}

func copyValue(v reflect.Value, depth int) (reflect.Value, error) {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Pointer, reflect.Struct:
		if depth++; depth > maxCopyDepth {
			return v, fmt.Errorf("%w: nested deeper than %d (cycle?)", serde.ErrUnsupportedValue, maxCopyDepth)
		}
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		c, err := copyValue(v.Elem(), depth)
		if err != nil {
			return v, err
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(c)
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return v, nil
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c, err := copyValue(it.Value(), depth)
			if err != nil {
				return v, err
			}
			out.SetMapIndex(it.Key(), c)
		}
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return v, nil
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if v.Type().Elem().Kind() == reflect.Uint8 {
			reflect.Copy(out, v)
			return out, nil
		}
		return out, copyElems(out, v, depth)
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		return out, copyElems(out, v, depth)
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		c, err := copyValue(v.Elem(), depth)
		if err != nil {
			return v, err
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(c)
		return out, nil
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		t := v.Type()
		for i := range v.NumField() {
			f := out.Field(i)
			src := v.Field(i)
			if !f.CanSet() {
				// An embedded struct of an unexported type: a
				// serializer stores its exported fields as the outer
				// struct's own (serde walks it as encoding/json does),
				// so it is copied like one. Reflection cannot set an
				// unexported field; out is addressable, so the field
				// is reached through its address, and read from out,
				// which holds v's field already.
				if sf := t.Field(i); !sf.Anonymous || sf.Type.Kind() != reflect.Struct {
					continue
				}
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
				src = f
			}
			c, err := copyValue(src, depth)
			if err != nil {
				return v, err
			}
			f.Set(c)
		}
		return out, nil
	}
	return v, nil
}

// copyElems sets out's elements to copies of v's.
func copyElems(out, v reflect.Value, depth int) error {
	for i := range v.Len() {
		c, err := copyValue(v.Index(i), depth)
		if err != nil {
			return err
		}
		out.Index(i).Set(c)
	}
	return nil
}
