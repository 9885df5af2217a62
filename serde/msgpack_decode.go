package serde

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/memvault/memvault/serde/pyvalue"
)

// decodeMsgpack parses a "msgpack" payload as LangGraph's Python
// JsonPlusSerializer writes it (ormsgpack with ext codes 0-7).
func decodeMsgpack(data []byte) (any, error) {
	d := mpDecoder{b: data}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("%w: msgpack: %d bytes after the value", ErrMalformed, len(d.b)-d.off)
	}
	return v, nil
}

type mpDecoder struct {
	b   []byte
	off int
}

var errShort = fmt.Errorf("%w: msgpack: truncated", ErrMalformed)

func (d *mpDecoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, errShort
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p, nil
}

func (d *mpDecoder) uint(n int) (uint64, error) {
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

func (d *mpDecoder) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errTooDeep
	}
	p, err := d.take(1)
	if err != nil {
		return nil, err
	}
	c := p[0]
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c >= 0xa0 && c <= 0xbf:
		return d.str(int(c & 0x1f))
	case c >= 0x90 && c <= 0x9f:
		return d.array(int(c&0x0f), depth)
	case c >= 0x80 && c <= 0x8f:
		return d.mapN(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, err := d.uint(1 << (c - 0xcc))
		if err != nil {
			return nil, err
		}
		if u <= math.MaxInt64 {
			return int64(u), nil
		}
		return u, nil
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n := 1 << (c - 0xd0)
		u, err := d.uint(n)
		if err != nil {
			return nil, err
		}
		switch n {
		case 1:
			return int64(int8(u)), nil
		case 2:
			return int64(int16(u)), nil
		case 4:
			return int64(int32(u)), nil
		}
		return int64(u), nil
	case 0xca:
		u, err := d.uint(4)
		if err != nil {
			return nil, err
		}
		return float64(math.Float32frombits(uint32(u))), nil
	case 0xcb:
		u, err := d.uint(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(u), nil
	case 0xd9, 0xda, 0xdb:
		n, err := d.uint(1 << (c - 0xd9))
		if err != nil {
			return nil, err
		}
		return d.str(clampLen(n))
	case 0xc4, 0xc5, 0xc6:
		n, err := d.uint(1 << (c - 0xc4))
		if err != nil {
			return nil, err
		}
		b, err := d.take(clampLen(n))
		if err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	case 0xdc, 0xdd:
		n, err := d.uint(2 << (c - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.array(clampLen(n), depth)
	case 0xde, 0xdf:
		n, err := d.uint(2 << (c - 0xde))
		if err != nil {
			return nil, err
		}
		return d.mapN(clampLen(n), depth)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return d.ext(1<<(c-0xd4), depth)
	case 0xc7, 0xc8, 0xc9:
		n, err := d.uint(1 << (c - 0xc7))
		if err != nil {
			return nil, err
		}
		return d.ext(clampLen(n), depth)
	}
	return nil, fmt.Errorf("%w: msgpack: reserved byte 0x%02x at %d", ErrMalformed, c, d.off-1)
}

// clampLen turns a declared length into an int that take rejects when it
// exceeds the input.
func clampLen(n uint64) int {
	if n > math.MaxInt32 {
		return -1
	}
	return int(n)
}

func (d *mpDecoder) str(n int) (any, error) {
	b, err := d.take(n)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func (d *mpDecoder) array(n, depth int) (any, error) {
	if n < 0 || n > len(d.b)-d.off { // every element takes at least a byte
		return nil, errShort
	}
	a := make([]any, n)
	for i := range a {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

func (d *mpDecoder) mapN(n, depth int) (any, error) {
	if n < 0 || n > (len(d.b)-d.off)/2 {
		return nil, errShort
	}
	m := make(map[string]any, n)
	var om map[any]any // once a key is not a string
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if s, ok := k.(string); ok && om == nil {
			m[s] = v
			continue
		}
		if !hashable(k) {
			return nil, fmt.Errorf("%w: msgpack: map key of type %T", ErrMalformed, k)
		}
		if om == nil {
			om = make(map[any]any, n)
			for ks, vs := range m {
				om[ks] = vs
			}
		}
		om[k] = v
	}
	if om != nil {
		return om, nil
	}
	return m, nil
}

func (d *mpDecoder) ext(n, depth int) (any, error) {
	p, err := d.take(1)
	if err != nil {
		return nil, err
	}
	code := int8(p[0])
	data, err := d.take(n)
	if err != nil {
		return nil, err
	}
	if code == -1 {
		return timestampExt(data)
	}
	if code < 0 || code > pyvalue.ExtDeltaSnapshot {
		return pyvalue.Ext{Code: code, Data: append([]byte{}, data...)}, nil
	}
	sub := mpDecoder{b: data}
	inner, err := sub.value(depth + 1)
	if err == nil && sub.off != len(data) {
		err = fmt.Errorf("%w: msgpack: ext %d: trailing bytes", ErrMalformed, code)
	}
	if err != nil {
		return nil, err
	}
	if code == pyvalue.ExtDeltaSnapshot {
		return pyvalue.DeltaSnapshot{Value: inner}, nil
	}
	arr, ok := inner.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: msgpack: ext %d payload is %T, not an array", ErrMalformed, code, inner)
	}
	if code == pyvalue.ExtNumpyArray {
		return numpyExt(arr)
	}
	return pyExt(code, arr)
}

func pyExt(code int8, arr []any) (any, error) {
	want := 3
	if code == pyvalue.ExtMethodSingleArg || code == pyvalue.ExtPydanticV2 {
		want = 4
	}
	if len(arr) != want && !(code == pyvalue.ExtPydanticV2 && len(arr) == 3) {
		return nil, fmt.Errorf("%w: msgpack: ext %d payload has %d elements", ErrMalformed, code, len(arr))
	}
	mod, ok1 := arr[0].(string)
	cls, ok2 := arr[1].(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: msgpack: ext %d: module and class must be strings", ErrMalformed, code)
	}
	o := pyvalue.PyObject{Ext: code, Module: mod, Class: cls, Arg: arr[2]}
	if len(arr) == 4 {
		m, ok := arr[3].(string)
		if !ok {
			return nil, fmt.Errorf("%w: msgpack: ext %d: method must be a string", ErrMalformed, code)
		}
		o.Method = m
	}
	switch code {
	case pyvalue.ExtConstructorPosArgs:
		if _, ok := o.Arg.([]any); !ok {
			return nil, fmt.Errorf("%w: msgpack: ext 1 arguments are %T", ErrMalformed, o.Arg)
		}
	case pyvalue.ExtConstructorKwArgs, pyvalue.ExtPydanticV1, pyvalue.ExtPydanticV2:
		if _, ok := o.Arg.(map[string]any); !ok {
			return nil, fmt.Errorf("%w: msgpack: ext %d fields are %T", ErrMalformed, code, o.Arg)
		}
	}
	return nativePy(o)
}

// nativePy maps well-known Python classes to Go values.
func nativePy(o pyvalue.PyObject) (any, error) {
	s, isStr := o.Arg.(string)
	switch {
	case o.Ext == pyvalue.ExtMethodSingleArg && o.Module == "datetime" && o.Class == "datetime" && o.Method == "fromisoformat" && isStr:
		if t, err := parseISO(s); err == nil {
			return t, nil
		}
	case o.Ext == pyvalue.ExtConstructorSingleArg && o.Module == "uuid" && o.Class == "UUID" && isStr:
		if u, err := pyvalue.ParseUUID(s); err == nil {
			return u, nil
		}
	case o.Ext == pyvalue.ExtConstructorSingleArg && o.Module == "decimal" && o.Class == "Decimal" && isStr:
		return pyvalue.Decimal(s), nil
	case o.Ext == pyvalue.ExtConstructorSingleArg && o.Module == "builtins" && o.Class == "set":
		if a, ok := o.Arg.([]any); ok {
			return pyvalue.Set(a), nil
		}
	}
	if o.Ext == pyvalue.ExtConstructorKwArgs || o.Ext == pyvalue.ExtPydanticV1 || o.Ext == pyvalue.ExtPydanticV2 {
		if t, ok := registeredType(o.Path()); ok {
			return fromFields(t, o.Fields())
		}
	}
	return o, nil
}

func numpyExt(arr []any) (any, error) {
	bad := fmt.Errorf("%w: msgpack: malformed numpy ext", ErrMalformed)
	if len(arr) != 4 {
		return nil, bad
	}
	dt, ok1 := arr[0].(string)
	shape, ok2 := arr[1].([]any)
	order, ok3 := arr[2].(string)
	buf, ok4 := arr[3].([]byte)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, bad
	}
	a := pyvalue.NumpyArray{DType: dt, Order: order, Data: buf, Shape: make([]int64, len(shape))}
	for i, s := range shape {
		n, ok := s.(int64)
		if !ok {
			return nil, bad
		}
		a.Shape[i] = n
	}
	return a, nil
}

// timestampExt decodes msgpack's standard timestamp extension (-1).
func timestampExt(b []byte) (any, error) {
	switch len(b) {
	case 4:
		return time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC(), nil
	case 8:
		v := binary.BigEndian.Uint64(b)
		ns := int64(v >> 34)
		if ns > 999999999 {
			break
		}
		return time.Unix(int64(v&(1<<34-1)), ns).UTC(), nil
	case 12:
		ns := int64(binary.BigEndian.Uint32(b))
		if ns > 999999999 {
			break
		}
		return time.Unix(int64(binary.BigEndian.Uint64(b[4:])), ns).UTC(), nil
	}
	return nil, fmt.Errorf("%w: msgpack: bad timestamp", ErrMalformed)
}
