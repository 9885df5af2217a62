package serde

import "encoding/binary"

// Associated data binds a ciphertext to the row it lives in, so a value copied
// to another thread, channel, version or store key fails to decrypt. Every
// backend builds it with these functions so that a row moved between SQLite
// and PostgreSQL (with its ids intact) still decrypts.
//
// Layout: a domain string, then each field as uvarint(len) || bytes. The
// length prefixes make the encoding injective ("a","bc" != "ab","c").

// BlobAAD is the associated data of a checkpoint channel value.
func BlobAAD(threadID, checkpointNS, channel, version string) []byte {
	return aad("memvault/blob/v1", threadID, checkpointNS, channel, version)
}

// AppendBlobAAD appends BlobAAD's bytes to dst, for callers that reuse a
// buffer.
func AppendBlobAAD(dst []byte, threadID, checkpointNS, channel, version string) []byte {
	return appendAAD(dst, "memvault/blob/v1", threadID, checkpointNS, channel, version)
}

// WriteAAD is the associated data of a pending write. The channel is bound
// too, so a write cannot be relabelled to another channel.
func WriteAAD(threadID, checkpointNS, checkpointID, taskID string, idx int, channel string) []byte {
	var b [binary.MaxVarintLen64]byte
	n := binary.PutVarint(b[:], int64(idx))
	return aad("memvault/write/v1", threadID, checkpointNS, checkpointID, taskID, string(b[:n]), channel)
}

// AppendWriteAAD appends WriteAAD's bytes to dst, for callers that reuse a
// buffer.
func AppendWriteAAD(dst []byte, threadID, checkpointNS, checkpointID, taskID string, idx int, channel string) []byte {
	var b [binary.MaxVarintLen64]byte
	n := binary.PutVarint(b[:], int64(idx))
	return appendAAD(dst, "memvault/write/v1", threadID, checkpointNS, checkpointID, taskID, string(b[:n]), channel)
}

// ItemAAD is the associated data of a store item value; namespace is the
// dotted namespace text as stored.
func ItemAAD(namespace, key string) []byte {
	return aad("memvault/item/v1", namespace, key)
}

func aad(domain string, fields ...string) []byte {
	n := len(domain) + 1
	for _, f := range fields {
		n += len(f) + binary.MaxVarintLen64
	}
	return appendAAD(make([]byte, 0, n), domain, fields...)
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
