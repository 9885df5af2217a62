// Package binding is the one place that knows where each kind of stored
// ciphertext lives and binds it there: it builds the associated data of
// checkpoint channel values (Blob), pending writes (Write) and store item
// values (Item), and seals, opens and moves values through a serializer
// under it. Every driver passes locations, never associated-data bytes, so
// a row moved to another thread, namespace, channel, version, checkpoint,
// task, index or key fails to decrypt on every driver alike, and a row moved
// between SQLite and PostgreSQL with its coordinates intact still opens.
//
// The layout of the associated data lives in package serde
// (serde.AppendBlobAAD, AppendWriteAAD, AppendItemAAD), exported there so
// that an operator tool can decode one stored row by hand; the golden file
// of this package's tests pins its bytes.
package binding
