package serde

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/idlimit"
)

// Serializer turns values into tagged bytes and back. The tag names the format
// ("json", "msgpack", "bytes", "null", "empty", or "<inner>+<cipher>" when
// encrypted) and is stored next to the bytes, exactly as LangGraph's
// SerializerProtocol does with dumps_typed / loads_typed.
type Serializer interface {
	// DumpsTyped encodes v and returns its type tag and payload.
	DumpsTyped(v any) (typ string, data []byte, err error)
	// LoadsTyped decodes a payload previously produced under tag typ.
	LoadsTyped(typ string, data []byte) (any, error)
}

// BoundSerializer is a Serializer whose output can be bound to associated data
// (where the value lives: thread, namespace, channel, version, ...). A payload
// dumped with one aad only loads with the same aad. Encrypted implements it;
// plain codecs ignore aad and need not implement it (see DumpsWith).
// Implementations must not keep aad (or data) after returning: callers
// reuse those buffers.
type BoundSerializer interface {
	Serializer
	// DumpsTypedWith is DumpsTyped with associated data.
	DumpsTypedWith(v any, aad []byte) (typ string, data []byte, err error)
	// LoadsTypedWith is LoadsTyped with associated data.
	LoadsTypedWith(typ string, data, aad []byte) (any, error)
}

// DumpsWith dumps v with s, binding the result to aad when s supports it.
func DumpsWith(s Serializer, v any, aad []byte) (string, []byte, error) {
	if b, ok := s.(BoundSerializer); ok {
		return b.DumpsTypedWith(v, aad)
	}
	return s.DumpsTyped(v)
}

// LoadsWith loads a payload with s, checking aad when s supports it.
func LoadsWith(s Serializer, typ string, data, aad []byte) (any, error) {
	if b, ok := s.(BoundSerializer); ok {
		return b.LoadsTypedWith(typ, data, aad)
	}
	return s.LoadsTyped(typ, data)
}

// Type tags shared by every codec and backend.
const (
	TypeJSON      = "json"
	TypeMsgpack   = "msgpack"
	TypeBytes     = "bytes"
	TypeByteArray = "bytearray"
	TypeNull      = "null"
	// TypeEmpty marks a channel that has a version but no value (written by
	// JS LangGraph and the in-memory savers); loaders skip it.
	TypeEmpty = "empty"
)

// Sentinel errors. Backends and callers match them with errors.Is.
var (
	// ErrUnknownType is returned for a type tag no codec understands; the
	// wrapping error names the tag.
	ErrUnknownType = errors.New("serde: unknown type tag")
	// ErrUnsupportedValue is returned when a Go value cannot be encoded.
	ErrUnsupportedValue = errors.New("serde: unsupported value")
	// ErrMalformed is returned when a payload does not parse under its tag.
	ErrMalformed = errors.New("serde: malformed payload")
	// ErrDecrypt is the single error for any decryption failure: tampered,
	// truncated, re-keyed or moved ciphertext, or an unknown key id. It never
	// says which check failed. It wraps crypto.ErrDecrypt, so that one
	// errors.Is(err, crypto.ErrDecrypt) catches failures from either layer.
	ErrDecrypt error = decryptError{}
	// ErrPlaintextRefused is returned by a strict Encrypted serializer asked to
	// load a value that carries no cipher suffix.
	ErrPlaintextRefused = errors.New("serde: plaintext value refused (encryption is on)")
	// ErrUnboundRefused is returned by an Encrypted serializer in envelope
	// mode asked to load a value in LangGraph's "aes" format ("json+aes",
	// "msgpack+aes"). That format carries no associated data, so such a row
	// decrypts wherever it is put — under another thread, channel, pending
	// write or another user's memory — and accepting it would undo the
	// binding the envelope gives. It is read only in LangGraph mode
	// (WithDangerousLangGraphAES) or with WithDangerousUnboundAESReads, for the
	// migration that rewrites such rows into the envelope.
	ErrUnboundRefused = errors.New("serde: unbound aes value refused (envelope mode binds every value to its row)")
)

func unknownType(typ string) error {
	return fmt.Errorf("%w: %s", ErrUnknownType, idlimit.Name("type", typ))
}

// decryptError is ErrDecrypt's type: its message is serde's own (the layer a
// caller sees) while errors.Is still reaches crypto.ErrDecrypt beneath it.
type decryptError struct{}

func (decryptError) Error() string { return "serde: decryption failed" }
func (decryptError) Unwrap() error { return crypto.ErrDecrypt }

// CheckValue returns the error s.DumpsTyped(v) returns for a value s
// cannot encode, nil for one it can, without keeping the encoding: a
// caller that checks values before queuing them (checkpointer/durable)
// pays for one encoding, not a sealed copy. An Encrypted serializer is
// checked by its inner codec alone — sealing fails only when the
// system's randomness or a key does, whatever the value — and JSONPlus
// and MsgPack encode into a reused buffer, wiped after, instead of
// copying the payload out. Any other serializer is asked to DumpsTyped.
func CheckValue(s Serializer, v any) error {
	if e, ok := s.(*Encrypted); ok {
		s = e.inner
	}
	if builtinCodec(s) {
		bp := scratch.Get().(*[]byte)
		pooled := (*bp)[:cap(*bp)]
		var err error
		if isJSONPlus(s) {
			_, *bp, err = appendJSONPlus((*bp)[:0], v)
		} else {
			_, *bp, err = appendMsgPack((*bp)[:0], v)
		}
		wipeEncoded(bp, pooled)
		return err
	}
	_, _, err := s.DumpsTyped(v)
	return err
}
