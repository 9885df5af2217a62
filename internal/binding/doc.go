// Package binding is the one place that knows where each kind of stored
// ciphertext lives and binds it there: it builds the associated data of
// checkpoint channel values (Blob), pending writes (Write) and store item
// values (Item), and seals, opens and moves values through a serializer
// under it. Every driver passes locations, never associated-data bytes, so
// a row moved to another thread, namespace, channel, version, checkpoint,
// task, index or key fails to decrypt on every driver alike, and a row moved
// between SQLite and PostgreSQL with its coordinates intact still opens.
//
// Layout of the associated data: a domain string and a zero byte, then each
// coordinate as uvarint(len) || bytes (the length prefixes make it
// injective: ("a","bc") != ("ab","c")). The bytes are part of the stored
// format: they never change for a domain; a new layout gets a new domain.
package binding
