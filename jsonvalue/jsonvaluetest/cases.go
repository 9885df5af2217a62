package jsonvaluetest

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"time"
)

// Case is one value handed to memvault (In) and the model value it must
// come back as (Want), compared with jsonvalue.Diff.
type Case struct {
	Name string
	In   any
	Want any
}

// Cases returns the fidelity cases. Each call returns fresh values, so a
// backend that keeps references cannot make a later case pass.
func Cases() []Case {
	bigPos, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	bigNeg, _ := new(big.Int).SetString("-98765432109876543210987654321", 10)
	justBelowMinInt64, _ := new(big.Int).SetString("-9223372036854775809", 10)
	// Far beyond float64 (whose largest is about 1.8e308): an integer
	// keeps every digit, whatever its size.
	digits400 := "1" + strings.Repeat("0", 398) + "7"
	big400, _ := new(big.Int).SetString(digits400, 10)
	type score float64
	type rawBytes []byte
	type label string
	type point struct {
		X int     `json:"x"`
		Y float64 `json:"y"`
	}
	cs := []Case{
		{"int", int(5), int64(5)},
		{"int8_min", int8(math.MinInt8), int64(math.MinInt8)},
		{"int16", int16(-300), int64(-300)},
		{"int32_max", int32(math.MaxInt32), int64(math.MaxInt32)},
		{"int64_max", int64(math.MaxInt64), int64(math.MaxInt64)},
		{"int64_min", int64(math.MinInt64), int64(math.MinInt64)},
		{"beyond_2^53", int64(1)<<53 + 1, int64(1)<<53 + 1},
		{"uint8", uint8(255), int64(255)},
		{"uint32_max", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"uint64_2^63", uint64(1) << 63, uint64(1) << 63},
		{"uint64_max", uint64(math.MaxUint64), uint64(math.MaxUint64)},
		{"zero_int", 0, int64(0)},
		{"float_integral", 5.0, 5.0},
		{"float_zero", 0.0, 0.0},
		// PostgreSQL's jsonb has no negative zero: the model has one zero.
		{"float_negative_zero", math.Copysign(0, -1), 0.0},
		{"float32_negative_zero", float32(math.Copysign(0, -1)), 0.0},
		{"number_negative_zero", json.Number("-0.0"), 0.0},
		{"float_negative", -2.5, -2.5},
		{"float_tenth", 0.1, 0.1},
		{"float_1e21", 1e21, 1e21},
		{"float_huge", 1.5e300, 1.5e300},
		{"float_max", math.MaxFloat64, math.MaxFloat64},
		{"float_tiny", 1e-7, 1e-7},
		{"float_denormal", 5e-324, 5e-324},
		{"float_long", 123456789.125, 123456789.125},
		{"float_2^53", float64(1 << 53), float64(1 << 53)},
		{"float32_tenth", float32(0.1), 0.1},
		{"float32_integral", float32(16777216), 16777216.0},
		{"number_int", json.Number("7"), int64(7)},
		{"number_integral_float", json.Number("7.0"), 7.0},
		{"number_exponent", json.Number("1e2"), 100.0},
		{"number_below_int64", json.Number("-9223372036854775809"), justBelowMinInt64},
		{"number_big", json.Number("123456789012345678901234567890"), new(big.Int).Set(bigPos)},
		{"number_400_digits", json.Number(digits400), new(big.Int).Set(big400)},
		{"number_400_digits_negative", json.Number("-" + digits400), new(big.Int).Neg(big400)},
		{"number_int64_min", json.Number("-9223372036854775808"), int64(math.MinInt64)},
		{"number_int64_max", json.Number("9223372036854775807"), int64(math.MaxInt64)},
		{"number_uint64_max", json.Number("18446744073709551615"), uint64(math.MaxUint64)},
		{"number_negative_zero_int", json.Number("-0"), int64(0)},
		{"number_exponent_1e5", json.Number("1e5"), 1e5},
		{"number_exponent_upper_signed", json.Number("1E+5"), 1e5},
		{"number_float_max", json.Number("1.7976931348623157e308"), math.MaxFloat64},
		// Below the smallest denormal: float64's nearest value is 0, as
		// every JSON reader gives it; not an error, and not a different
		// value than the literal's float64.
		{"number_underflow", json.Number("1e-400"), 0.0},
		{"bigint_400_digits", new(big.Int).Set(big400), new(big.Int).Set(big400)},
		{"bigint_small", big.NewInt(42), int64(42)},
		{"bigint_uint64", new(big.Int).SetUint64(math.MaxUint64), uint64(math.MaxUint64)},
		{"bigint_positive", new(big.Int).Set(bigPos), new(big.Int).Set(bigPos)},
		{"bigint_negative", new(big.Int).Set(bigNeg), new(big.Int).Set(bigNeg)},
		{"bytes", []byte("hi\x00\xff"), []byte("hi\x00\xff")},
		{"bytes_empty", []byte{}, []byte{}},
		{"bytes_nil", []byte(nil), nil},
		{"bytes_named", rawBytes{1, 2, 3}, []byte{1, 2, 3}},
		{"bytes_in_list", []any{[]byte{0xff}, "x"}, []any{[]byte{0xff}, "x"}},
		{"string_empty", "", ""},
		{"string_unicode", "日本語 🦜 e\u0301", "日本語 🦜 e\u0301"},
		{"string_separators", "a\u2028b\u2029c", "a\u2028b\u2029c"},
		{"string_nul", "a\x00b", "a\x00b"},
		{"string_sql", `'; DROP TABLE store; -- \" %_`, `'; DROP TABLE store; -- \" %_`},
		{"string_numeric", "5", "5"},
		{"bool_true", true, true},
		{"bool_false", false, false},
		{"null", nil, nil},
		{"named_float", score(3), 3.0},
		{"named_string", label("x"), "x"},
		{"pointer", ptr(int32(9)), int64(9)},
		{"nil_pointer", (*int)(nil), nil},
		{"time", time.Date(2024, 5, 4, 6, 32, 42, 123456789, time.UTC), "2024-05-04T06:32:42.123456789Z"},
		{"struct", point{X: 1, Y: 2.5}, map[string]any{"x": int64(1), "y": 2.5}},
		{"typed_slice", []int{1, 2}, []any{int64(1), int64(2)}},
		{"typed_map_keeps_floats", map[string]float64{"a": 1, "b": 0.5}, map[string]any{"a": 1.0, "b": 0.5}},
		{"empty_list", []any{}, []any{}},
		{"empty_object", map[string]any{}, map[string]any{}},
		{"nested", map[string]any{
			"a": []any{int(1), 2.0, map[string]any{"b": uint16(3), "c": []any{}}},
			"d": map[string]any{"e": json.Number("1.50"), "f": nil, "g": []any{[]any{int8(-1)}}},
		}, map[string]any{
			"a": []any{int64(1), 2.0, map[string]any{"b": int64(3), "c": []any{}}},
			"d": map[string]any{"e": 1.5, "f": nil, "g": []any{[]any{int64(-1)}}},
		}},
	}
	return cs
}

// RefusedNumbers returns json.Number values memvault must refuse, keyed by
// name: literals that are not JSON numbers (leading zeros, hex, a sign or
// point JSON does not allow, NaN and Infinity spelt out, empty) and
// numbers with a fraction or an exponent beyond float64's range, which
// would otherwise be stored as text and read back as ±Inf or not at all.
// An integer literal is never refused for its size (see the
// number_400_digits case). Every literal holds the digits in
// SecretDigits, so a test can check that an error does not quote it.
func RefusedNumbers() map[string]json.Number {
	d := SecretDigits
	return map[string]json.Number{
		"exponent_beyond_float64":  json.Number(d + "e400"),
		"negative_beyond_float64":  json.Number("-" + d + "e400"),
		"400_digits_with_fraction": json.Number(d + strings.Repeat("9", 390) + ".5"),
		"just_beyond_float64_max":  json.Number("1.7976931348623159e308"),
		"huge_exponent":            json.Number(d + "e99999999999999999999"),
		"leading_zeros":            json.Number("00" + d),
		"hex":                      json.Number("0x" + d),
		"plus_sign":                json.Number("+" + d),
		"trailing_point":           json.Number(d + "."),
		"leading_point":            json.Number("." + d),
		"two_points":               json.Number(d + ".1.2"),
		"nan_spelt":                json.Number("NaN"),
		"infinity_spelt":           json.Number("Infinity"),
		"empty":                    json.Number(""),
		"space":                    json.Number(" " + d),
	}
}

// SecretDigits are the digits every RefusedNumbers literal holds (but
// just_beyond_float64_max and the spelt-out and empty ones, which have
// none of them); an error must not show them.
const SecretDigits = "31415926535"

// All returns every case's input as one object keyed by case name, and the
// model value it must come back as: one put that carries every shape.
func All() (in, want map[string]any) {
	in, want = map[string]any{}, map[string]any{}
	for _, c := range Cases() {
		in[c.Name] = c.In
		want[c.Name] = c.Want
	}
	return in, want
}

func ptr[T any](v T) *T { return &v }
