// Package serde turns agent state into tagged bytes and back, compatibly
// with LangGraph's serializers, and encrypts it.
//
// A Serializer returns a type tag with each payload ("json", "msgpack",
// "bytes", "null", ...); backends store the tag next to the bytes, exactly as
// LangGraph's checkpoint tables do.
//
//   - JSONPlus is the codec: it writes "json", which Python and JS LangGraph
//     both read, and reads everything LangGraph writes ("json" with lc:1 /
//     lc:2 constructor records, Python's "msgpack" with its extension types,
//     "bytes", "bytearray", "null", "empty"). Its documentation lists the Go
//     types values come back as.
//   - MsgPack is the same codec writing "msgpack" the way Python does, for
//     databases shared with Python only.
//   - Register makes a struct type travel by name and come back as itself.
//   - Encrypted wraps any Serializer: "<inner>+<cipher>" tags, associated
//     data binding a value to where it is stored (memvault's drivers build
//     it from each value's coordinates), strict refusal of plaintext, one generic ErrDecrypt, and
//     LangGraph's "aes" format for databases shared with Python.
//
// DumpsWith and LoadsWith pass associated data to serializers that take it
// (BoundSerializer) and drop it for those that do not.
//
// All serializers here are safe for concurrent use. Errors wrap the
// package's sentinel errors (ErrUnknownType, ErrUnsupportedValue,
// ErrMalformed, ErrDecrypt, ErrPlaintextRefused); none contains key bytes.
package serde
