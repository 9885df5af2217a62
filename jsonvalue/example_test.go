package jsonvalue_test

import (
	"encoding/json"
	"fmt"

	"github.com/memvault/memvault/jsonvalue"
)

func Example() {
	in := map[string]any{"n": uint8(7), "f": 5.0, "f32": float32(0.1), "big": json.Number("123456789012345678901234567890")}
	text, _ := jsonvalue.Marshal(in)
	fmt.Println(string(text))
	back, _ := jsonvalue.Unmarshal(text)
	m := back.(map[string]any)
	fmt.Printf("%T %T %T %T\n", m["n"], m["f"], m["f32"], m["big"])
	// Output:
	// {"big":123456789012345678901234567890,"f":5.0,"f32":0.1,"n":7}
	// int64 float64 float64 *big.Int
}
