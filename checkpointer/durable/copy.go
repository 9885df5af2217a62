package durable

import "reflect"

// maxCopyDepth bounds deepCopy's recursion: a value nested deeper (or a
// cycle) is kept by reference below it, as no serializer stores it anyway.
const maxCopyDepth = 100

// deepCopy copies v's maps, slices, arrays, pointers and the exported
// fields of its structs, so that a queued write keeps the value its caller
// passed even if the caller changes it afterwards, as a synchronous put
// would have stored it. Channels, functions and unexported fields are kept
// by reference.
func deepCopy[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	rv.Set(copyValue(rv, 0))
	return v
}

func copyValue(v reflect.Value, depth int) reflect.Value {
	if depth > maxCopyDepth {
		return v
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := copyValue(v.Elem(), depth+1)
		out := reflect.New(v.Type()).Elem()
		out.Set(c)
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), copyValue(it.Value(), depth+1))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if v.Type().Elem().Kind() == reflect.Uint8 {
			reflect.Copy(out, v)
			return out
		}
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i), depth+1))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i), depth+1))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(copyValue(v.Elem(), depth+1))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(copyValue(v.Field(i), depth+1))
			}
		}
		return out
	}
	return v
}
