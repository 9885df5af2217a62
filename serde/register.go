package serde

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

var registry struct {
	sync.RWMutex
	byName map[string]reflect.Type
	byType map[reflect.Type]string
}

// Register makes struct type T travel by name: JSONPlus writes a T (or *T)
// as an lc:2 constructor record whose class path is name split at dots
// (name "myapp.models.Order" gives id ["myapp","models","Order"]) and the
// struct's fields as keyword arguments; MsgPack writes it as ext 2 with
// module "myapp.models" and class "Order", the way Python writes a
// dataclass. Both decode such a record back into a T (not *T). A Python
// program with a class of that path revives it too; use a dotted name
// (a module and a class) if Python reads the values, since Python cannot
// import an empty module.
//
// Fields follow encoding/json's rules: exported fields, the `json` tag's
// name, "omitempty" and "-", embedded structs flattened.
//
// Register is meant for init functions; it panics if T is not a struct or
// if name or T is already registered.
func Register[T any](name string) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("serde: Register %s: not a struct", t))
	}
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
		panic(fmt.Sprintf("serde: Register %s: bad name %q", t, name))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]reflect.Type{}
		registry.byType = map[reflect.Type]string{}
	}
	if old, ok := registry.byName[name]; ok {
		panic(fmt.Sprintf("serde: Register %s: name %q already taken by %s", t, name, old))
	}
	if old, ok := registry.byType[t]; ok {
		panic(fmt.Sprintf("serde: Register %s: already registered as %q", t, old))
	}
	registry.byName[name] = t
	registry.byType[t] = name
}

func registeredName(t reflect.Type) (string, bool) {
	registry.RLock()
	defer registry.RUnlock()
	n, ok := registry.byType[t]
	return n, ok
}

func registeredType(name string) (reflect.Type, bool) {
	registry.RLock()
	defer registry.RUnlock()
	t, ok := registry.byName[name]
	return t, ok
}

// field is one encoded struct field.
type field struct {
	name      string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []field

// structFields lists t's encoded fields in declaration order.
func structFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			if sf.Anonymous && name == "" {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct && depth < 8 && sf.Type.Kind() != reflect.Pointer {
					walk(ft, idx, depth+1)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				continue // the shallower field wins, as in encoding/json
			}
			seen[name] = true
			out = append(out, field{name: name, index: idx, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	walk(t, nil, 0)
	fieldCache.Store(t, out)
	return out
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
