package serde

import "encoding/binary"

// The associated data memvault's drivers bind each stored value to: where
// the value lives. A value sealed for one row fails to open in any other
// (another thread, namespace, channel, version, checkpoint, task, index or
// key), on every driver alike. Pass it to LoadsWith to decode one stored
// row by hand, as `memvault serde decode` does.
//
// Layout: a domain string and a zero byte, then each coordinate as
// uvarint(len) || bytes (the length prefixes make it injective: ("a","bc")
// != ("ab","c")). The bytes are part of the stored format: they never
// change for a domain; a new layout gets a new domain.

// AppendBlobAAD appends to dst the associated data of a checkpoint channel
// value: the checkpoint_blobs row (thread, ns, channel, version). Domain
// "memvault/blob/v1".
func AppendBlobAAD(dst []byte, thread, ns, channel, version string) []byte {
	return appendAAD(dst, "memvault/blob/v1", thread, ns, channel, version)
}

// AppendWriteAAD appends to dst the associated data of a pending write:
// the checkpoint_writes row (thread, ns, checkpoint, task, idx, channel).
// The channel is bound too, so a write cannot be relabelled to another
// channel. Domain "memvault/write/v1"; idx as a zig-zag varint.
func AppendWriteAAD(dst []byte, thread, ns, checkpoint, task string, idx int, channel string) []byte {
	var b [binary.MaxVarintLen64]byte
	n := binary.PutVarint(b[:], int64(idx))
	return appendAAD(dst, "memvault/write/v1", thread, ns, checkpoint, task, string(b[:n]), channel)
}

// AppendItemAAD appends to dst the associated data of a store item's
// value; namespace is the dotted namespace text as stored (the prefix
// column, store.Namespace.String). Domain "memvault/item/v1".
func AppendItemAAD(dst []byte, namespace, key string) []byte {
	return appendAAD(dst, "memvault/item/v1", namespace, key)
}

func appendAAD(out []byte, domain string, fields ...string) []byte {
	out = append(out, domain...)
	out = append(out, 0)
	for _, f := range fields {
		out = binary.AppendUvarint(out, uint64(len(f)))
		out = append(out, f...)
	}
	return out
}
