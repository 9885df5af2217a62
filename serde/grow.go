package serde

import "slices"

// The encoders' buffers hold plaintext, and an append that outgrows one
// moves it to a new array, leaving the old one, with the text written so
// far, to the garbage collector as it was. Every write to an encoder's
// buffer goes through moved, reserve or room, which wipe the array it
// leaves (room before an append it sized, so that the append never grows).
// An encoder owns its buffer (a scratch buffer, or one it made), so no
// caller still reads an array it outgrew.

// moved returns b, the result of an append to old, after wiping old's
// array when the append moved to a new one. An append moves exactly when
// it needs more than old's capacity, and the array it moves to is larger:
// so b's capacity tells, without comparing the arrays.
func moved(old, b []byte) []byte {
	if cap(b) != cap(old) {
		clear(old[:cap(old)])
	}
	return b
}

// reserve returns b with room for n more bytes, wiping b's array when it
// moves. It comes before a function that appends more than once
// (jsonvalue.AppendString, strconv.AppendFloat, big.Int.Append): a growth
// inside one would leave arrays that moved never sees.
func reserve(b []byte, n int) []byte { return moved(b, slices.Grow(b, n)) }

// room makes room in e's buffer for n more bytes (reserve), before an
// append of at most n: the append then never grows, and, written
// e.b = append(e.b, …), stores only the length back, where assigning a
// result (moved's) stores the whole slice, a pointer the garbage collector
// must see each time (a write barrier while it marks).
func (e *jsonEncoder) room(n int) {
	if cap(e.b)-len(e.b) < n {
		e.b = reserve(e.b, n)
	}
}

// room is jsonEncoder.room for msgpack.
func (e *mpEncoder) room(n int) {
	if cap(e.b)-len(e.b) < n {
		e.b = reserve(e.b, n)
	}
}
