package serde

import "slices"

// The encoders' buffers hold plaintext, and an append that outgrows one
// moves it to a new array, leaving the old one, with the text written so
// far, to the garbage collector as it was. Every write to an encoder's
// buffer goes through moved or reserve, which wipe the array it leaves.
// An encoder owns its buffer (a scratch buffer, or one it made), so no
// caller still reads an array it outgrew.

// moved returns b, the result of an append to old, after wiping old's
// array when the append moved to a new one.
func moved(old, b []byte) []byte {
	if cap(old) > 0 && (cap(b) == 0 || &old[:1][0] != &b[:1][0]) {
		clear(old[:cap(old)])
	}
	return b
}

// reserve returns b with room for n more bytes, wiping b's array when it
// moves. It comes before a function that appends more than once
// (jsonvalue.AppendString, strconv.AppendFloat, big.Int.Append): a growth
// inside one would leave arrays that moved never sees.
func reserve(b []byte, n int) []byte { return moved(b, slices.Grow(b, n)) }
