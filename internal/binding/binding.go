package binding

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/serde"
)

// Location is where a value is stored: Blob, Write or Item.
type Location interface {
	// AppendAAD appends the location's associated data to dst.
	AppendAAD(dst []byte) []byte
}

// Blob locates a checkpoint channel value (a checkpoint_blobs row).
type Blob struct {
	Thread, NS, Channel, Version string
}

// AppendAAD implements Location (domain "memvault/blob/v1").
func (b Blob) AppendAAD(dst []byte) []byte {
	return appendAAD(dst, "memvault/blob/v1", b.Thread, b.NS, b.Channel, b.Version)
}

// Write locates a pending write (a checkpoint_writes row). The channel is
// bound too, so a write cannot be relabelled to another channel.
type Write struct {
	Thread, NS, Checkpoint, Task string
	Idx                          int
	Channel                      string
}

// AppendAAD implements Location (domain "memvault/write/v1"; idx as a
// zig-zag varint).
func (w Write) AppendAAD(dst []byte) []byte {
	var b [binary.MaxVarintLen64]byte
	n := binary.PutVarint(b[:], int64(w.Idx))
	return appendAAD(dst, "memvault/write/v1", w.Thread, w.NS, w.Checkpoint, w.Task, string(b[:n]), w.Channel)
}

// Item locates a store item's value; Namespace is the dotted namespace
// text as stored (store.Namespace.String).
type Item struct {
	Namespace, Key string
}

// AppendAAD implements Location (domain "memvault/item/v1").
func (i Item) AppendAAD(dst []byte) []byte {
	return appendAAD(dst, "memvault/item/v1", i.Namespace, i.Key)
}

// AAD returns the associated data of a location.
func AAD(at Location) []byte { return at.AppendAAD(make([]byte, 0, 96)) }

func appendAAD(out []byte, domain string, fields ...string) []byte {
	out = append(out, domain...)
	out = append(out, 0)
	for _, f := range fields {
		out = binary.AppendUvarint(out, uint64(len(f)))
		out = append(out, f...)
	}
	return out
}

// Codec seals and opens values with a serializer, binding them to their
// location when the serializer supports it (serde.BoundSerializer, as
// serde.Encrypted does). The zero value is unusable; use New.
type Codec struct {
	s     serde.Serializer
	bound serde.BoundSerializer
}

// New returns the codec of s.
func New(s serde.Serializer) Codec {
	c := Codec{s: s}
	c.bound, _ = s.(serde.BoundSerializer)
	return c
}

// Serializer returns the codec's serializer.
func (c Codec) Serializer() serde.Serializer { return c.s }

// Bound reports whether values are bound to their location (so that
// copying one elsewhere needs Move, not a byte copy).
func (c Codec) Bound() bool { return c.bound != nil }

// Seal serializes (and, with a bound serializer, encrypts) v for at.
func (c Codec) Seal(ctx context.Context, at Location, v any) (string, []byte, error) {
	if c.bound == nil {
		return c.s.DumpsTyped(v)
	}
	return c.bound.DumpsTypedWith(v, AAD(at))
}

// Open deserializes (and decrypts) a value stored at at.
func (c Codec) Open(ctx context.Context, at Location, typ string, data []byte) (any, error) {
	if c.bound == nil {
		return c.s.LoadsTyped(typ, data)
	}
	return c.bound.LoadsTypedWith(typ, data, AAD(at))
}

// OpenBuf is Open building the associated data in *buf, which it reuses
// across calls: for loops that open many values.
func OpenBuf[L Location](ctx context.Context, c Codec, buf *[]byte, at L, typ string, data []byte) (any, error) {
	if c.bound == nil {
		return c.s.LoadsTyped(typ, data)
	}
	*buf = at.AppendAAD((*buf)[:0])
	return c.bound.LoadsTypedWith(typ, data, *buf)
}

// Move returns a value stored at from as it must be stored at to: opened
// and sealed again when it is encrypted (its type tag has a cipher suffix),
// the same bytes otherwise (plaintext is not bound).
func (c Codec) Move(ctx context.Context, from, to Location, typ string, data []byte) (string, []byte, error) {
	if typ == serde.TypeEmpty || !strings.Contains(typ, "+") {
		return typ, data, nil
	}
	v, err := c.Open(ctx, from, typ, data)
	if err != nil {
		return "", nil, err
	}
	t, d, err := c.Seal(ctx, to, v)
	if err != nil {
		return "", nil, err
	}
	if d == nil {
		d = []byte{}
	}
	return t, d, nil
}

// Row is the re-encryption engine's view of a stored value at at; key
// identifies its row for the driver.
func Row(key []any, at Location, typ string, data []byte) rotate.Row {
	return rotate.Row{Key: key, Typ: typ, Data: data, AAD: AAD(at)}
}
