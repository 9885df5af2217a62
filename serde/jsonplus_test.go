package serde

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/serde/pyvalue"
)

type testAddress struct {
	Street string `json:"street"`
	Zip    int16  `json:"zip,omitempty"`
}

type testOrder struct {
	ID      int64          `json:"id"`
	Small   int8           `json:"small"`
	Big     uint64         `json:"big"`
	U32     uint32         `json:"u32"`
	Price   float32        `json:"price"`
	Ratio   float64        `json:"ratio"`
	Paid    bool           `json:"paid"`
	Note    *string        `json:"note"`
	Tags    []string       `json:"tags"`
	Counts  map[string]int `json:"counts"`
	ByID    map[int]string `json:"by_id"`
	At      time.Time      `json:"at"`
	Blob    []byte         `json:"blob"`
	Addr    testAddress    `json:"addr"`
	AddrPtr *testAddress   `json:"addr_ptr"`
	Item    testItem       `json:"item"`
	Items   []testItem     `json:"items"`
	Any     any            `json:"any"`
	Fixed   [3]int         `json:"fixed"`
	ID2     pyvalue.UUID   `json:"id2"`
	Skip    string         `json:"-"`
	Extra   map[string]any `json:"extra,omitempty"`
	//lint:ignore U1000 an unexported field the codec must ignore
	unexport int
	Nested   map[string][]int8 `json:"nested"`
}

type testItem struct {
	Name string
	Qty  int
}

func init() {
	Register[testOrder]("tests.models.Order")
	Register[testItem]("Item")
}

func sampleOrder() testOrder {
	note := "ring twice"
	loc := time.FixedZone("", 5*3600+30*60)
	return testOrder{
		ID: math.MaxInt64, Small: -128, Big: math.MaxUint64, U32: math.MaxUint32,
		Price: 3.25, Ratio: 0.1, Paid: true, Note: &note,
		Tags: []string{"a", "b"}, Counts: map[string]int{"x": 1}, ByID: map[int]string{-1: "neg", 7: "seven"},
		At:   time.Date(2024, 2, 29, 23, 59, 58, 123456789, loc),
		Blob: []byte{0, 1, 254, 255}, Addr: testAddress{"Main", 12345}, AddrPtr: &testAddress{Street: "Side"},
		Item: testItem{"pen", 2}, Items: []testItem{{"a", 1}, {"b", 2}},
		Any:   map[string]any{"deep": []any{int64(1), "two", []byte("three")}},
		Fixed: [3]int{1, 2, 3}, ID2: pyvalue.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Nested: map[string][]int8{"n": {-1, 0, 1}},
	}
}

func codecs() map[string]Serializer {
	return map[string]Serializer{"json": JSONPlus{}, "msgpack": MsgPack{}}
}

func roundTrip(t *testing.T, s Serializer, v any) any {
	t.Helper()
	typ, data, err := s.DumpsTyped(v)
	if err != nil {
		t.Fatalf("dumps %T: %v", v, err)
	}
	got, err := s.LoadsTyped(typ, data)
	if err != nil {
		t.Fatalf("loads %T (%s %q): %v", v, typ, data, err)
	}
	return got
}

func TestRegisteredStructRoundTrip(t *testing.T) {
	for name, s := range codecs() {
		t.Run(name, func(t *testing.T) {
			in := sampleOrder()
			got := roundTrip(t, s, in)
			out, ok := got.(testOrder)
			if !ok {
				t.Fatalf("got %T", got)
			}
			if !out.At.Equal(in.At) {
				t.Errorf("time %v != %v", out.At, in.At)
			}
			if _, off := out.At.Zone(); off != 5*3600+30*60 {
				t.Errorf("offset %d", off)
			}
			out.At, in.At = time.Time{}, time.Time{}
			if !reflect.DeepEqual(out, in) {
				t.Errorf("round trip\n got %#v\nwant %#v", out, in)
			}
			// A pointer encodes the same and comes back as a value.
			if _, ok := roundTrip(t, s, &in).(testOrder); !ok {
				t.Error("pointer did not come back as testOrder")
			}
		})
	}
}

func TestGenericRoundTrip(t *testing.T) {
	values := []any{
		"", "héllo\n\"\\\u2028\x01", true, false,
		int64(0), int64(-1), int64(math.MinInt64), int64(math.MaxInt64), uint64(math.MaxUint64),
		1.5, 0.0, math.Copysign(0, -1), 1e300, 5e-324, math.Inf(1), math.Inf(-1),
		[]any{}, []any{nil, "x", int64(1)},
		map[string]any{}, map[string]any{"a": map[string]any{"b": []any{int64(2)}}},
		map[any]any{int64(1): "one", "two": int64(2), true: nil},
		[]any{[]byte{}, []byte("bytes")},
		time.Date(2001, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2001, 1, 2, 3, 4, 5, 6000, time.FixedZone("", -7*3600)),
		pyvalue.UUID{0xde, 0xad}, pyvalue.Decimal("3.14159265358979323846"), pyvalue.Set{"a", int64(1)},
		pyvalue.PyObject{Ext: 0, Module: "enum_mod", Class: "Color", Arg: "red"},
		pyvalue.PyObject{Ext: 5, Module: "langchain_core.messages.ai", Class: "AIMessage", Arg: map[string]any{"content": "hi"}, Method: "model_validate_json"},
		pyvalue.DeltaSnapshot{Value: []any{"x"}},
	}
	for name, s := range codecs() {
		for _, v := range values {
			got := roundTrip(t, s, v)
			if name == "json" {
				if _, isPy := v.(pyvalue.PyObject); isPy {
					continue // becomes a Constructor in JSON; tested below
				}
			}
			if !equalValues(got, v) {
				t.Errorf("%s: %#v came back as %#v", name, v, got)
			}
		}
		if f := roundTrip(t, s, math.NaN()).(float64); !math.IsNaN(f) {
			t.Errorf("%s: NaN came back as %v", name, f)
		}
	}
}

func equalValues(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		_, oa := ta.Zone()
		_, ob := tb.Zone()
		return ok && ta.Equal(tb) && oa == ob
	}
	return reflect.DeepEqual(a, b)
}

func TestIntegerWidths(t *testing.T) {
	ints := []any{int8(-128), int16(-32768), int32(math.MinInt32), int(math.MaxInt), uint8(255), uint16(65535), uint32(math.MaxUint32), uint(42)}
	for name, s := range codecs() {
		for _, v := range ints {
			got := roundTrip(t, s, v)
			want := reflect.ValueOf(v)
			var ok bool
			switch g := got.(type) {
			case int64:
				ok = want.CanInt() && want.Int() == g || want.CanUint() && want.Uint() == uint64(g)
			case uint64:
				ok = want.CanUint() && want.Uint() == g
			}
			if !ok {
				t.Errorf("%s: %T(%v) came back as %T(%v)", name, v, v, got, got)
			}
		}
	}
	// JSON integers beyond 64 bits keep every digit.
	got, err := JSONPlus{}.LoadsTyped("json", []byte(`[123456789012345678901234567890, 1.0, 1e2, 9007199254740993]`))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	arr := got.([]any)
	if arr[0].(*big.Int).Cmp(want) != 0 || arr[1] != 1.0 || arr[2] != 100.0 || arr[3] != int64(9007199254740993) {
		t.Fatalf("%#v", arr)
	}
	if typ, data, _ := (JSONPlus{}).DumpsTyped(arr); typ != "json" || string(data) != `[123456789012345678901234567890,1.0,100.0,9007199254740993]` {
		t.Fatalf("%s", data)
	}
}

func TestUnregisteredStructIsMap(t *testing.T) {
	type local struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
		C []byte
	}
	for name, s := range codecs() {
		got := roundTrip(t, s, local{A: 1, C: []byte{9}})
		want := map[string]any{"a": int64(1), "C": []byte{9}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v", name, got)
		}
	}
}

func TestTopLevelTags(t *testing.T) {
	for name, s := range codecs() {
		for _, tc := range []struct {
			v   any
			typ string
		}{{nil, TypeNull}, {(*testOrder)(nil), TypeNull}, {[]byte("raw"), TypeBytes}} {
			want := tc.typ
			if _, ok := s.(JSONPlus); ok && want == TypeNull {
				// JSONPlus writes nil as JSON null: JS reads only json/bytes.
				want = TypeJSON
			}
			typ, data, err := s.DumpsTyped(tc.v)
			if err != nil || typ != want {
				t.Errorf("%s %#v: %s %v, want %s", name, tc.v, typ, err, want)
			}
			if want == TypeNull && len(data) != 0 {
				t.Errorf("null payload %q", data)
			}
			if want == TypeJSON && tc.typ == TypeNull && string(data) != "null" {
				t.Errorf("json nil payload %q", data)
			}
		}
		for _, typ := range []string{TypeNull, TypeEmpty} {
			if v, err := s.LoadsTyped(typ, nil); v != nil || err != nil {
				t.Errorf("%s: %v %v", typ, v, err)
			}
		}
		if v, err := s.LoadsTyped(TypeByteArray, []byte("ba")); err != nil || string(v.([]byte)) != "ba" {
			t.Errorf("bytearray: %v %v", v, err)
		}
		_, err := s.LoadsTyped("pickle", []byte("x"))
		if !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), `"pickle"`) {
			t.Errorf("unknown tag: %v", err)
		}
	}
}

func TestUnsupported(t *testing.T) {
	type cyc struct{ Next *cyc }
	c := &cyc{}
	c.Next = c
	for name, s := range codecs() {
		for _, v := range []any{make(chan int), func() {}, complex(1, 2), c, map[string]any{"f": func() {}}} {
			if _, _, err := s.DumpsTyped(v); !errors.Is(err, ErrUnsupportedValue) {
				t.Errorf("%s %T: %v", name, v, err)
			}
		}
	}
}
