package serde

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde/pyvalue"
)

// MaxDepth is the deepest nesting of maps, slices and structs a
// serializer encodes or decodes: deeper values (a cycle, hostile input)
// fail with ErrUnsupportedValue or ErrMalformed, so neither can exhaust
// the stack.
const MaxDepth = 10000

type jsonEncoder struct {
	b     []byte
	depth int
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	marshalType = reflect.TypeFor[json.Marshaler]()
)

func (e *jsonEncoder) encode(v any) error {
	// Fast paths for the types decoding produces.
	switch x := v.(type) {
	case nil:
		e.room(len("null"))
		e.b = append(e.b, "null"...)
		return nil
	case string:
		return e.str(x)
	case bool:
		e.b = moved(e.b, strconv.AppendBool(e.b, x))
		return nil
	case int64:
		e.b = moved(e.b, strconv.AppendInt(e.b, x, 10))
		return nil
	case int:
		e.b = moved(e.b, strconv.AppendInt(e.b, int64(x), 10))
		return nil
	case float64:
		e.float(x, 64)
		return nil
	case map[string]any:
		return e.stringMap(x)
	case []any:
		return e.array(len(x), func(i int) error { return e.encode(x[i]) })
	case []byte:
		return e.constructor([]string{"Uint8Array"}, "from", []any{bytesToInts(x)}, nil)
	case time.Time:
		return e.constructor([]string{"datetime", "datetime"}, "fromisoformat", []any{formatISO(x)}, nil)
	case pyvalue.UUID:
		return e.constructor([]string{"uuid", "UUID"}, "", []any{x.Hex()}, nil)
	case pyvalue.Decimal:
		return e.constructor([]string{"decimal", "Decimal"}, "", []any{string(x)}, nil)
	case pyvalue.Set:
		return e.constructor([]string{"Set"}, "", []any{[]any(x)}, nil)
	case pyvalue.Constructor:
		return e.constructorRecord(x)
	case *pyvalue.Constructor:
		if x != nil {
			return e.constructorRecord(*x)
		}
	case pyvalue.PyObject:
		return e.pyObject(x)
	case pyvalue.DeltaSnapshot:
		return e.deltaSnapshot(x)
	case pyvalue.NumpyArray:
		return e.constructor([]string{"numpy", "ndarray"}, "", nil, map[string]any{
			"dtype": x.DType, "shape": int64sToAny(x.Shape), "order": x.Order, "data": x.Data})
	case pyvalue.Ext:
		return e.constructor([]string{"msgpack", "ExtType"}, "", []any{int64(x.Code), x.Data}, nil)
	case *big.Int:
		if x != nil {
			// At most one digit per three bits, and a sign.
			e.b = reserve(e.b, x.BitLen()/3+2)
			e.b = moved(e.b, x.Append(e.b, 10))
			return nil
		}
	case json.Number:
		// Not just valid JSON: a non-integer beyond float64 ("1e400")
		// is valid JSON that reads back as ±Inf, a different value, so
		// it is refused as the msgpack encoder and the store refuse it.
		// The error gives its length, never its text: it is the value
		// (and unbounded), and errors reach logs.
		if _, err := jsonvalue.Number(x); err != nil {
			return fmt.Errorf("%w: %v", ErrUnsupportedValue, err)
		}
		e.room(len(x))
		e.b = append(e.b, x...)
		return nil
	}
	return e.reflectValue(reflect.ValueOf(v))
}

func (e *jsonEncoder) enter() error {
	e.depth++
	if e.depth > MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d (cycle?)", ErrUnsupportedValue, MaxDepth)
	}
	return nil
}

func (e *jsonEncoder) reflectValue(v reflect.Value) error {
	if !v.IsValid() {
		e.room(len("null"))
		e.b = append(e.b, "null"...)
		return nil
	}
	t := v.Type()
	if t.Implements(marshalType) && (t.Kind() != reflect.Pointer || !v.IsNil()) {
		_, special := specialType(t)
		_, registered := registeredName(t)
		if !special && !registered {
			raw, err := v.Interface().(json.Marshaler).MarshalJSON()
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrUnsupportedValue, t, err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return fmt.Errorf("%w: %s: MarshalJSON: %v", ErrUnsupportedValue, t, err)
			}
			// Compact passes the bytes of strings through unchecked.
			if err := checkText(t.String()+"'s MarshalJSON output", buf.String()); err != nil {
				return err
			}
			// Nor does it check that a number reads back as itself.
			if err := checkNumbers(t.String()+"'s MarshalJSON output", buf.Bytes()); err != nil {
				return err
			}
			e.room(buf.Len())
			e.b = append(e.b, buf.Bytes()...)
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		e.b = moved(e.b, strconv.AppendBool(e.b, v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.b = moved(e.b, strconv.AppendInt(e.b, v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.b = moved(e.b, strconv.AppendUint(e.b, v.Uint(), 10))
	case reflect.Float32:
		e.float(v.Float(), 32)
	case reflect.Float64:
		e.float(v.Float(), 64)
	case reflect.String:
		return e.str(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			e.room(len("null"))
			e.b = append(e.b, "null"...)
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		defer func() { e.depth-- }()
		return e.encode(v.Elem().Interface())
	case reflect.Slice:
		if v.IsNil() {
			e.room(len("null"))
			e.b = append(e.b, "null"...)
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return e.encode(v.Bytes())
		}
		fallthrough
	case reflect.Array:
		return e.array(v.Len(), func(i int) error { return e.reflectValue(v.Index(i)) })
	case reflect.Map:
		if v.IsNil() {
			e.room(len("null"))
			e.b = append(e.b, "null"...)
			return nil
		}
		return e.reflectMap(v)
	case reflect.Struct:
		if special, ok := specialType(t); ok {
			return e.encode(special(v))
		}
		kw, err := structToMap(v)
		if err != nil {
			return err
		}
		if name, ok := registeredName(t); ok {
			return e.constructor(strings.Split(name, "."), "", nil, kw)
		}
		return e.stringMap(kw)
	default:
		return fmt.Errorf("%w: %s", ErrUnsupportedValue, t)
	}
	return nil
}

// specialType converts named types of the special kinds (e.g. a type whose
// underlying type is time.Time is not special; these are exact types).
func specialType(t reflect.Type) (func(reflect.Value) any, bool) {
	switch t {
	case timeType, reflect.TypeFor[pyvalue.UUID](), reflect.TypeFor[pyvalue.Decimal](), reflect.TypeFor[pyvalue.Set](),
		reflect.TypeFor[pyvalue.Constructor](), reflect.TypeFor[pyvalue.PyObject](), reflect.TypeFor[pyvalue.DeltaSnapshot](),
		reflect.TypeFor[pyvalue.NumpyArray](), reflect.TypeFor[pyvalue.Ext]():
		return func(v reflect.Value) any { return v.Interface() }, true
	}
	return nil, false
}

// structToMap returns a struct's encoded fields. Values are kept as Go
// values (encoded later by the caller's codec).
func structToMap(v reflect.Value) (map[string]any, error) {
	fields := structFields(v.Type())
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			continue
		}
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		if !fv.CanInterface() {
			continue
		}
		m[f.name] = fv.Interface()
	}
	return m, nil
}

func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func (e *jsonEncoder) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		_ = e.constructor([]string{"builtins", "float"}, "", []any{"nan"}, nil)
		return
	case math.IsInf(f, 1):
		_ = e.constructor([]string{"builtins", "float"}, "", []any{"inf"}, nil)
		return
	case math.IsInf(f, -1):
		_ = e.constructor([]string{"builtins", "float"}, "", []any{"-inf"}, nil)
		return
	}
	start := len(e.b)
	e.b = reserve(e.b, 32) // "-1.2345678901234567e-308" is 24 bytes
	e.b = moved(e.b, strconv.AppendFloat(e.b, f, 'g', -1, bits))
	// Keep a float a float: "1" would decode as an integer.
	if !bytes.ContainsAny(e.b[start:], ".e") {
		e.room(len(".0"))
		e.b = append(e.b, ".0"...)
	}
}

func (e *jsonEncoder) array(n int, elem func(int) error) error {
	if err := e.enter(); err != nil {
		return err
	}
	e.room(1)
	e.b = append(e.b, '[')
	for i := range n {
		if i > 0 {
			e.room(2)
			e.b = append(e.b, ',')
		}
		if err := elem(i); err != nil {
			return err
		}
	}
	e.room(1)
	e.b = append(e.b, ']')
	e.depth--
	return nil
}

func (e *jsonEncoder) stringMap(m map[string]any) error {
	if m == nil {
		e.room(len("null"))
		e.b = append(e.b, "null"...)
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	// A state's maps have few keys: they sort on the stack.
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.room(1)
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.room(2)
			e.b = append(e.b, ',')
		}
		if err := checkText("an object key", k); err != nil {
			return err
		}
		e.appendString(k)
		e.room(1)
		e.b = append(e.b, ':')
		if err := e.encode(m[k]); err != nil {
			return err
		}
	}
	e.room(1)
	e.b = append(e.b, '}')
	e.depth--
	return nil
}

// reflectMap writes a map with string keys as an object and any other map
// as JS's Map constructor record, whose entries keep their key types.
func (e *jsonEncoder) reflectMap(v reflect.Value) error {
	if v.Type().Key().Kind() == reflect.String {
		m := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return e.stringMap(m)
	}
	type entry struct {
		key []byte
		k   any
		v   any
	}
	entries := make([]entry, 0, v.Len())
	defer func() { // the keys' encodings, plaintext too
		for _, en := range entries {
			clear(en.key)
		}
	}()
	it := v.MapRange()
	for it.Next() {
		sub := jsonEncoder{depth: e.depth}
		err := sub.encode(it.Key().Interface())
		entries = append(entries, entry{sub.b, it.Key().Interface(), it.Value().Interface()})
		if err != nil {
			return err
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	pairs := make([]any, len(entries))
	for i, en := range entries {
		pairs[i] = []any{en.k, en.v}
	}
	return e.constructor([]string{"Map"}, "", []any{pairs}, nil)
}

// constructor writes an lc:2 constructor record with every key present,
// as Python's JsonPlusSerializer writes (and its reader requires).
func (e *jsonEncoder) constructor(id []string, method string, args []any, kwargs map[string]any) error {
	if err := e.enter(); err != nil {
		return err
	}
	e.room(len(`{"lc":2,"type":"constructor","id":`))
	e.b = append(e.b, `{"lc":2,"type":"constructor","id":`...)
	if err := e.stringArray(id); err != nil {
		return err
	}
	e.room(len(`,"method":`))
	e.b = append(e.b, `,"method":`...)
	if method == "" {
		e.room(len("null"))
		e.b = append(e.b, "null"...)
	} else if err := e.str(method); err != nil {
		return err
	}
	e.room(len(`,"args":`))
	e.b = append(e.b, `,"args":`...)
	if args == nil {
		args = []any{}
	}
	if err := e.encode(args); err != nil {
		return err
	}
	e.room(len(`,"kwargs":`))
	e.b = append(e.b, `,"kwargs":`...)
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	if err := e.stringMap(kwargs); err != nil {
		return err
	}
	e.room(1)
	e.b = append(e.b, '}')
	e.depth--
	return nil
}

func (e *jsonEncoder) stringArray(s []string) error {
	e.room(1)
	e.b = append(e.b, '[')
	for i, x := range s {
		if i > 0 {
			e.room(2)
			e.b = append(e.b, ',')
		}
		if err := e.str(x); err != nil {
			return err
		}
	}
	e.room(1)
	e.b = append(e.b, ']')
	return nil
}

// str writes s as a JSON string; invalid UTF-8 is refused (checkText).
func (e *jsonEncoder) str(s string) error {
	if err := checkText("a string", s); err != nil {
		return err
	}
	e.appendString(s)
	return nil
}

func (e *jsonEncoder) constructorRecord(c pyvalue.Constructor) error {
	if c.LC == 2 && c.Type == "constructor" {
		if len(c.Extra) == 0 {
			return e.constructor(c.ID, c.Method, c.Args, c.Kwargs)
		}
	}
	return e.stringMap(constructorMap(c))
}

// constructorMap is a constructor record as the JSON object it stands for.
func constructorMap(c pyvalue.Constructor) map[string]any {
	m := make(map[string]any, len(c.Extra)+6)
	for k, v := range c.Extra {
		m[k] = v
	}
	m["lc"] = int64(c.LC)
	m["type"] = c.Type
	id := make([]any, len(c.ID))
	for i, s := range c.ID {
		id[i] = s
	}
	m["id"] = id
	_, hasMethod := m["method"]
	_, hasArgs := m["args"]
	_, hasKwargs := m["kwargs"]
	switch {
	case c.Method != "":
		m["method"] = c.Method
	case c.LC == 2 && !hasMethod:
		m["method"] = nil
	}
	switch {
	case c.Args != nil:
		m["args"] = c.Args
	case c.LC == 2 && !hasArgs:
		m["args"] = []any{}
	}
	switch {
	case c.Kwargs != nil:
		m["kwargs"] = c.Kwargs
	case c.LC == 2 && !hasKwargs:
		m["kwargs"] = map[string]any{}
	}
	return m
}

// pyObject writes a Python object read from msgpack. LangChain messages
// become lc:1 records (what langchain_core writes and both Python's and
// JS's loaders revive); everything else an lc:2 constructor of the same
// class.
func (e *jsonEncoder) pyObject(o pyvalue.PyObject) error {
	id := append(strings.Split(o.Module, "."), o.Class)
	if o.Module == "" {
		id = []string{o.Class}
	}
	switch o.Ext {
	case pyvalue.ExtConstructorSingleArg:
		return e.constructor(id, "", []any{o.Arg}, nil)
	case pyvalue.ExtConstructorPosArgs:
		args, _ := o.Arg.([]any)
		return e.constructor(id, "", args, nil)
	case pyvalue.ExtMethodSingleArg:
		return e.constructor(id, o.Method, []any{o.Arg}, nil)
	}
	fields := o.Fields()
	if o.Ext == pyvalue.ExtPydanticV2 && strings.HasPrefix(o.Module, "langchain_core.messages") {
		kw := make(map[string]any, len(fields))
		for k, v := range fields {
			if v != nil {
				kw[k] = v
			}
		}
		return e.constructorRecord(pyvalue.Constructor{LC: 1, Type: "constructor",
			ID: []string{"langchain", "schema", "messages", o.Class}, Kwargs: kw})
	}
	return e.constructor(id, "", nil, fields)
}

func (e *jsonEncoder) deltaSnapshot(d pyvalue.DeltaSnapshot) error {
	if err := e.enter(); err != nil {
		return err
	}
	e.room(len(`{"lc":2,"type":"delta_snapshot","value":`))
	e.b = append(e.b, `{"lc":2,"type":"delta_snapshot","value":`...)
	if err := e.encode(d.Value); err != nil {
		return err
	}
	e.room(1)
	e.b = append(e.b, '}')
	e.depth--
	return nil
}

func bytesToInts(b []byte) []any {
	out := make([]any, len(b))
	for i, c := range b {
		out[i] = int64(c)
	}
	return out
}

func int64sToAny(s []int64) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// formatISO formats t like Python's datetime.isoformat(): microseconds only
// when non-zero, and a "+HH:MM" offset (never "Z"). Sub-microsecond
// precision, which Python does not have, is written as 9 fraction digits
// (Python 3.11+ truncates it when reading).
func formatISO(t time.Time) string {
	layout := "2006-01-02T15:04:05"
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1000 == 0:
		layout += ".000000"
	default:
		layout += ".000000000"
	}
	_, off := t.Zone()
	if off%60 != 0 {
		layout += "-07:00:00"
	} else {
		layout += "-07:00"
	}
	return t.Format(layout)
}

// appendString appends s as a JSON string (jsonvalue.AppendString:
// UTF-8 kept as it is, like Python's ensure_ascii=False). Callers have
// refused invalid UTF-8 (checkText), which it would replace by U+FFFD.
func (e *jsonEncoder) appendString(s string) {
	if b, ok := jsonvalue.AppendStringWithin(e.b, s); ok {
		e.b = b
		return
	}
	// Room first, so that AppendString does not grow the buffer inside
	// (see reserve).
	e.b = reserve(e.b, jsonvalue.StringLen(s))
	e.b = moved(e.b, jsonvalue.AppendString(e.b, s))
}
