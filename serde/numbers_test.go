package serde_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
	"github.com/memvault/memvault/serde"
)

// rawNumber is a json.Marshaler that writes whatever literal it holds.
type rawNumber string

func (r rawNumber) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// numberSerializers are the serializers a saver may run: JSONPlus writes
// "json", MsgPack "msgpack", Encrypted seals JSONPlus.
func numberSerializers(t *testing.T) map[string]serde.Serializer {
	enc, err := serde.NewEncrypted(serde.JSONPlus{}, mustRing(t, "0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]serde.Serializer{"jsonplus": serde.JSONPlus{}, "msgpack": serde.MsgPack{}, "encrypted": enc}
}

// TestNumbersBeyondFloat64Refused: a json.Number with a fraction or
// exponent beyond float64 ("1e400") was written as is by JSONPlus and read
// back as +Inf, a different value. Every serializer now refuses it, and
// every other literal that is not a JSON number, with ErrUnsupportedValue
// and an error that gives no digit of it, as the store and metadata do.
func TestNumbersBeyondFloat64Refused(t *testing.T) {
	for sname, s := range numberSerializers(t) {
		for name, n := range jsonvaluetest.RefusedNumbers() {
			for shape, v := range map[string]any{
				"alone":     n,
				"nested":    map[string]any{"ok": int64(1), "l": []any{"x", n}},
				"in_struct": struct{ N json.Number }{n},
			} {
				typ, data, err := s.DumpsTyped(v)
				if !errors.Is(err, serde.ErrUnsupportedValue) {
					got, lerr := s.LoadsTyped(typ, data)
					t.Errorf("%s %s %s: DumpsTyped: err %v, want serde.ErrUnsupportedValue (read back as %v, %v)", sname, name, shape, err, got, lerr)
					continue
				}
				if strings.Contains(err.Error(), jsonvaluetest.SecretDigits) {
					t.Errorf("%s %s %s: error shows the number: %v", sname, name, shape, err)
				}
			}
		}
	}
}

// TestMarshalJSONNumberBeyondFloat64Refused: JSONPlus writes a
// json.Marshaler's output as is; a number in it beyond float64 would read
// back as ±Inf, so it is refused, while a huge integer (read back exactly)
// and a string holding such digits are kept.
func TestMarshalJSONNumberBeyondFloat64Refused(t *testing.T) {
	d := jsonvaluetest.SecretDigits
	for _, bad := range []string{d + "e400", `{"a":[1,"x\"1e400",-` + d + `.5e999]}`, `[1.0,2E+400]`, `["a\\",` + d + `e400]`, `{"k\"":"\\\"","n":` + d + `e400}`} {
		_, _, err := serde.JSONPlus{}.DumpsTyped(rawNumber(bad))
		if !errors.Is(err, serde.ErrUnsupportedValue) {
			t.Errorf("MarshalJSON %q: err %v, want serde.ErrUnsupportedValue", bad, err)
		} else if strings.Contains(err.Error(), d) {
			t.Errorf("MarshalJSON %q: error shows the number: %v", bad, err)
		}
	}
	huge := "1" + strings.Repeat("0", 399)
	wantHuge, _ := new(big.Int).SetString(huge, 10)
	for raw, want := range map[string]any{
		huge:                        wantHuge,
		`"1e400"`:                   "1e400",
		`{"s":"\\\"1e400","n":1e5}`: map[string]any{"s": `\"1e400`, "n": 1e5},
		`-1e-400`:                   math.Copysign(0, -1),
	} {
		typ, data, err := serde.JSONPlus{}.DumpsTyped(rawNumber(raw))
		if err != nil {
			t.Errorf("MarshalJSON %.40q: %v", raw, err)
			continue
		}
		got, err := serde.JSONPlus{}.LoadsTyped(typ, data)
		if err != nil {
			t.Errorf("MarshalJSON %.40q: LoadsTyped: %v", raw, err)
			continue
		}
		if d := jsonvalue.Diff(want, got); d != "" {
			t.Errorf("MarshalJSON %.40q: %s", raw, d)
		}
	}
}

// TestNumbersRoundTripAlike: the number literals memvault accepts come
// back from every serializer with the same Go type and value: integers of
// any size exactly (int64, uint64, *big.Int), others as the float64 the
// literal names.
func TestNumbersRoundTripAlike(t *testing.T) {
	for sname, s := range numberSerializers(t) {
		for _, c := range jsonvaluetest.Cases() {
			if _, ok := c.In.(json.Number); !ok {
				if _, ok := c.In.(*big.Int); !ok {
					continue
				}
			}
			typ, data, err := s.DumpsTyped(c.In)
			if err != nil {
				t.Errorf("%s %s: DumpsTyped: %v", sname, c.Name, err)
				continue
			}
			got, err := s.LoadsTyped(typ, data)
			if err != nil {
				t.Errorf("%s %s: LoadsTyped: %v", sname, c.Name, err)
				continue
			}
			want := c.Want
			if c.Name == "number_negative_zero" {
				want = math.Copysign(0, -1) // a blob keeps the sign jsonb drops
			}
			if d := jsonvalue.Diff(want, got); d != "" {
				t.Errorf("%s %s: %s", sname, c.Name, d)
			}
		}
	}
}
