package serde

import (
	"bytes"
	"encoding/binary"
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

// mpEncoder writes msgpack as Python's JsonPlusSerializer does, so Python
// revives the same objects: time.Time as ext 3 datetime, UUID / Decimal /
// Set as ext 0, registered structs as ext 2 (like a dataclass), PyObject
// with its own ext code.
type mpEncoder struct {
	b     []byte
	depth int
}

// errIntBeyond64Bits: msgpack has no integer wider than 64 bits; MsgPack
// writes such values as "json" instead.
var errIntBeyond64Bits = fmt.Errorf("%w: integer does not fit 64 bits", ErrUnsupportedValue)

func (e *mpEncoder) enter() error {
	e.depth++
	if e.depth > MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d (cycle?)", ErrUnsupportedValue, MaxDepth)
	}
	return nil
}

func (e *mpEncoder) encode(v any) error {
	switch x := v.(type) {
	case nil:
		e.room(1)
		e.b = append(e.b, 0xc0)
		return nil
	case string:
		return e.text(x)
	case bool:
		if x {
			e.room(1)
			e.b = append(e.b, 0xc3)
		} else {
			e.room(1)
			e.b = append(e.b, 0xc2)
		}
		return nil
	case int64:
		e.int(x)
		return nil
	case int:
		e.int(int64(x))
		return nil
	case float64:
		e.room(1)
		e.b = append(e.b, 0xcb)
		e.b = moved(e.b, binary.BigEndian.AppendUint64(e.b, math.Float64bits(x)))
		return nil
	case []byte:
		e.bin(x)
		return nil
	case map[string]any:
		return e.stringMap(x)
	case []any:
		return e.array(len(x), func(i int) error { return e.encode(x[i]) })
	case time.Time:
		return e.py(pyvalue.PyObject{Ext: pyvalue.ExtMethodSingleArg, Module: "datetime", Class: "datetime", Arg: formatISO(x), Method: "fromisoformat"})
	case pyvalue.UUID:
		return e.py(pyvalue.PyObject{Ext: pyvalue.ExtConstructorSingleArg, Module: "uuid", Class: "UUID", Arg: x.Hex()})
	case pyvalue.Decimal:
		return e.py(pyvalue.PyObject{Ext: pyvalue.ExtConstructorSingleArg, Module: "decimal", Class: "Decimal", Arg: string(x)})
	case pyvalue.Set:
		return e.py(pyvalue.PyObject{Ext: pyvalue.ExtConstructorSingleArg, Module: "builtins", Class: "set", Arg: []any(x)})
	case pyvalue.PyObject:
		return e.py(x)
	case pyvalue.NumpyArray:
		return e.ext(pyvalue.ExtNumpyArray, []any{x.DType, int64sToAny(x.Shape), x.Order, x.Data})
	case pyvalue.DeltaSnapshot:
		sub := mpEncoder{depth: e.depth}
		defer func() { clear(sub.b) }() // plaintext too
		if err := sub.encode(x.Value); err != nil {
			return err
		}
		e.extRaw(pyvalue.ExtDeltaSnapshot, sub.b)
		return nil
	case pyvalue.Ext:
		e.extRaw(x.Code, x.Data)
		return nil
	case pyvalue.Constructor:
		return e.constructor(x)
	case json.Number:
		// The number its literal names, as JSONPlus reads it back, not
		// the string msgpack would otherwise write.
		n, err := jsonvalue.Number(x)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnsupportedValue, err)
		}
		if f, ok := n.(float64); ok && f == 0 {
			// The JSON model has one zero; a serialized value keeps
			// the literal's sign, as JSONPlus does ("-0.0").
			f, _ = x.Float64()
			n = f
		}
		return e.encode(n)
	case *big.Int:
		if x != nil {
			if x.IsInt64() {
				e.int(x.Int64())
				return nil
			}
			if x.IsUint64() {
				e.uint(x.Uint64())
				return nil
			}
			return fmt.Errorf("%w: %s", errIntBeyond64Bits, x)
		}
	}
	return e.reflectValue(reflect.ValueOf(v))
}

func (e *mpEncoder) reflectValue(v reflect.Value) error {
	if !v.IsValid() {
		e.room(1)
		e.b = append(e.b, 0xc0)
		return nil
	}
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		return e.encode(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.uint(v.Uint())
	case reflect.Float32:
		// As a float64, the one nearest the float32's shortest decimal,
		// which is what JSONPlus writes and reads back: float32(0.1) is
		// 0.1 from either codec, not 0.10000000149011612.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', -1, 32), 64)
		return e.encode(f)
	case reflect.Float64:
		return e.encode(v.Float())
	case reflect.String:
		return e.text(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			e.room(1)
			e.b = append(e.b, 0xc0)
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		defer func() { e.depth-- }()
		return e.encode(v.Elem().Interface())
	case reflect.Slice:
		if v.IsNil() {
			e.room(1)
			e.b = append(e.b, 0xc0)
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			e.bin(v.Bytes())
			return nil
		}
		fallthrough
	case reflect.Array:
		return e.array(v.Len(), func(i int) error { return e.reflectValue(v.Index(i)) })
	case reflect.Map:
		if v.IsNil() {
			e.room(1)
			e.b = append(e.b, 0xc0)
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
			mod, cls := "", name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				mod, cls = name[:i], name[i+1:]
			}
			return e.py(pyvalue.PyObject{Ext: pyvalue.ExtConstructorKwArgs, Module: mod, Class: cls, Arg: kw})
		}
		return e.stringMap(kw)
	default:
		return fmt.Errorf("%w: %s", ErrUnsupportedValue, t)
	}
	return nil
}

func (e *mpEncoder) int(i int64) {
	switch {
	case i >= 0:
		e.uint(uint64(i))
	case i >= -32:
		e.room(1)
		e.b = append(e.b, byte(int8(i)))
	case i >= math.MinInt8:
		e.room(2)
		e.b = append(e.b, 0xd0, byte(int8(i)))
	case i >= math.MinInt16:
		e.room(1)
		e.b = append(e.b, 0xd1)
		e.b = moved(e.b, binary.BigEndian.AppendUint16(e.b, uint16(int16(i))))
	case i >= math.MinInt32:
		e.room(1)
		e.b = append(e.b, 0xd2)
		e.b = moved(e.b, binary.BigEndian.AppendUint32(e.b, uint32(int32(i))))
	default:
		e.room(1)
		e.b = append(e.b, 0xd3)
		e.b = moved(e.b, binary.BigEndian.AppendUint64(e.b, uint64(i)))
	}
}

func (e *mpEncoder) uint(u uint64) {
	switch {
	case u <= 0x7f:
		e.room(1)
		e.b = append(e.b, byte(u))
	case u <= math.MaxUint8:
		e.room(2)
		e.b = append(e.b, 0xcc, byte(u))
	case u <= math.MaxUint16:
		e.room(1)
		e.b = append(e.b, 0xcd)
		e.b = moved(e.b, binary.BigEndian.AppendUint16(e.b, uint16(u)))
	case u <= math.MaxUint32:
		e.room(1)
		e.b = append(e.b, 0xce)
		e.b = moved(e.b, binary.BigEndian.AppendUint32(e.b, uint32(u)))
	default:
		e.room(1)
		e.b = append(e.b, 0xcf)
		e.b = moved(e.b, binary.BigEndian.AppendUint64(e.b, u))
	}
}

func (e *mpEncoder) header(n int, fix, fixMax byte, b8, b16, b32 byte) {
	switch {
	case fix != 0 && n <= int(fixMax):
		e.room(1)
		e.b = append(e.b, fix|byte(n))
	case b8 != 0 && n <= math.MaxUint8:
		e.room(2)
		e.b = append(e.b, b8, byte(n))
	case n <= math.MaxUint16:
		e.room(1)
		e.b = append(e.b, b16)
		e.b = moved(e.b, binary.BigEndian.AppendUint16(e.b, uint16(n)))
	default:
		e.room(1)
		e.b = append(e.b, b32)
		e.b = moved(e.b, binary.BigEndian.AppendUint32(e.b, uint32(n)))
	}
}

// text writes s as a str; invalid UTF-8 is refused (checkText).
func (e *mpEncoder) text(s string) error {
	if err := checkText("a string", s); err != nil {
		return err
	}
	e.str(s)
	return nil
}

func (e *mpEncoder) str(s string) {
	e.header(len(s), 0xa0, 31, 0xd9, 0xda, 0xdb)
	e.room(len(s))
	e.b = append(e.b, s...)
}

func (e *mpEncoder) bin(b []byte) {
	e.header(len(b), 0, 0, 0xc4, 0xc5, 0xc6)
	e.room(len(b))
	e.b = append(e.b, b...)
}

func (e *mpEncoder) array(n int, elem func(int) error) error {
	if err := e.enter(); err != nil {
		return err
	}
	e.header(n, 0x90, 15, 0, 0xdc, 0xdd)
	for i := range n {
		if err := elem(i); err != nil {
			return err
		}
	}
	e.depth--
	return nil
}

func (e *mpEncoder) stringMap(m map[string]any) error {
	if err := e.enter(); err != nil {
		return err
	}
	var buf [16]string // most maps' keys sort on the stack
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.header(len(m), 0x80, 15, 0, 0xde, 0xdf)
	for _, k := range keys {
		if err := checkText("an object key", k); err != nil {
			return err
		}
		e.str(k)
		if err := e.encode(m[k]); err != nil {
			return err
		}
	}
	e.depth--
	return nil
}

// reflectMap writes any map, keys sorted by their encoding.
func (e *mpEncoder) reflectMap(v reflect.Value) error {
	if err := e.enter(); err != nil {
		return err
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	defer func() { // the entries' encodings, plaintext too
		for _, en := range entries {
			clear(en.k)
			clear(en.v)
		}
	}()
	it := v.MapRange()
	for it.Next() {
		var ke, ve mpEncoder
		ke.depth, ve.depth = e.depth, e.depth
		err := ke.encode(it.Key().Interface())
		if err == nil {
			err = ve.encode(it.Value().Interface())
		}
		entries = append(entries, entry{ke.b, ve.b})
		if err != nil {
			return err
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	e.header(len(entries), 0x80, 15, 0, 0xde, 0xdf)
	for _, en := range entries {
		e.room(len(en.k))
		e.b = append(e.b, en.k...)
		e.room(len(en.v))
		e.b = append(e.b, en.v...)
	}
	e.depth--
	return nil
}

func (e *mpEncoder) py(o pyvalue.PyObject) error {
	arr := []any{o.Module, o.Class, o.Arg}
	if o.Method != "" || o.Ext == pyvalue.ExtMethodSingleArg || o.Ext == pyvalue.ExtPydanticV2 {
		arr = append(arr, o.Method)
	}
	return e.ext(o.Ext, arr)
}

func (e *mpEncoder) ext(code int8, payload any) error {
	sub := mpEncoder{depth: e.depth}
	defer func() { clear(sub.b) }() // plaintext too
	if err := sub.encode(payload); err != nil {
		return err
	}
	e.extRaw(code, sub.b)
	return nil
}

func (e *mpEncoder) extRaw(code int8, data []byte) {
	switch n := len(data); n {
	case 1:
		e.room(1)
		e.b = append(e.b, 0xd4)
	case 2:
		e.room(1)
		e.b = append(e.b, 0xd5)
	case 4:
		e.room(1)
		e.b = append(e.b, 0xd6)
	case 8:
		e.room(1)
		e.b = append(e.b, 0xd7)
	case 16:
		e.room(1)
		e.b = append(e.b, 0xd8)
	default:
		e.header(n, 0, 0, 0xc7, 0xc8, 0xc9)
	}
	e.room(1)
	e.b = append(e.b, byte(code))
	e.room(len(data))
	e.b = append(e.b, data...)
}

// constructor writes a JSON constructor record as the msgpack ext Python
// would have written for the same object, or, when there is none (lc:1
// records, JS-only classes), as the record's JSON object.
func (e *mpEncoder) constructor(c pyvalue.Constructor) error {
	if c.LC == 2 && c.Type == "constructor" && len(c.ID) >= 2 && len(c.Extra) == 0 {
		o := pyvalue.PyObject{Module: strings.Join(c.ID[:len(c.ID)-1], "."), Class: c.ID[len(c.ID)-1]}
		switch {
		case c.Method != "" && len(c.Args) == 1 && len(c.Kwargs) == 0:
			o.Ext, o.Arg, o.Method = pyvalue.ExtMethodSingleArg, c.Args[0], c.Method
			return e.py(o)
		case c.Method == "" && len(c.Args) == 0 && c.Kwargs != nil:
			o.Ext, o.Arg = pyvalue.ExtConstructorKwArgs, c.Kwargs
			return e.py(o)
		case c.Method == "" && len(c.Args) == 1 && len(c.Kwargs) == 0:
			o.Ext, o.Arg = pyvalue.ExtConstructorSingleArg, c.Args[0]
			return e.py(o)
		case c.Method == "" && len(c.Kwargs) == 0:
			o.Ext, o.Arg = pyvalue.ExtConstructorPosArgs, append([]any{}, c.Args...)
			return e.py(o)
		}
	}
	return e.stringMap(constructorMap(c))
}
