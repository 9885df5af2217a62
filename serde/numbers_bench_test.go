package serde

import (
	"bytes"
	"encoding/json"
	"testing"
)

// benchMarshaler is a value whose MarshalJSON returns a fixed chat-like
// state: the path checkNumbers was added to.
type benchMarshaler []byte

func (m benchMarshaler) MarshalJSON() ([]byte, error) { return m, nil }

// BenchmarkMarshalerNumbers measures what the number check adds to a
// json.Marshaler's value: "raw" is the Compact + UTF-8 check JSONPlus ran
// before, "checked" the same plus checkNumbers, "dumps" the whole
// DumpsTyped of the value, all on the same ~64 KiB output.
func BenchmarkMarshalerNumbers(b *testing.B) {
	raw, err := json.Marshal(benchState(64 << 10))
	if err != nil {
		b.Fatal(err)
	}
	step := func(b *testing.B, numbers bool) {
		b.SetBytes(int64(len(raw)))
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := json.Compact(&buf, raw); err != nil {
				b.Fatal(err)
			}
			if err := checkText("x", buf.String()); err != nil {
				b.Fatal(err)
			}
			if numbers {
				if err := checkNumbers("x", buf.Bytes()); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("raw", func(b *testing.B) { step(b, false) })
	b.Run("checked", func(b *testing.B) { step(b, true) })
	b.Run("dumps", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, _, err := (JSONPlus{}).DumpsTyped(benchMarshaler(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
