package serde

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/memvault/memvault/internal/aead"
	"github.com/memvault/memvault/internal/idlimit"

	"github.com/memvault/memvault/crypto"
)

// Encrypted wraps a Serializer and encrypts its payloads. The tag of an
// encrypted value is "<inner tag>+<cipher name>" ("json+mvgcm",
// "msgpack+aes"), split at the first '+' when loading, exactly as LangGraph's
// EncryptedSerializer does.
//
// Two ciphers exist (see package crypto): memvault's envelope ("mvgcm", the
// default), which binds each value to the associated data given to
// DumpsTypedWith / LoadsTypedWith and to its inner tag; and LangGraph's
// "aes" (written in LangGraph-compatible mode), which Python reads but which
// carries no associated data. With the envelope, the associated data handed
// to the cipher is uvarint(len(inner tag)) ‖ inner tag ‖ aad, so a value
// cannot be relabelled either. Envelope values are read in both modes, with
// any key of the keyring; "aes" values only in LangGraph mode or with
// WithDangerousUnboundAESReads (ErrUnboundRefused otherwise), since a row
// that decrypts anywhere would undo the envelope's binding.
//
// Loading is strict by default: a value without a cipher suffix is refused
// with ErrPlaintextRefused (Python's serializer passes such values through,
// letting whoever can write the database inject plaintext); use
// WithDangerousPlaintextReads while migrating an unencrypted database. Tag "empty"
// is refused too: it is a backend's marker for a channel without a value,
// which backends skip before loading, and carries no authentication, so a
// loader that accepted it would let whoever can write the database replace
// any value (a pending write, say) by nil. Every decryption failure — tampered,
// truncated, wrong key, unknown key, other associated data, changed inner
// tag — is ErrDecrypt and says no more.
//
// An Encrypted is safe for concurrent use.
type Encrypted struct {
	inner          Serializer
	write          aead.Cipher
	tags           map[string]string // inner tag → written tag, for the common ones
	read           map[string]aead.Cipher
	ring           *crypto.Keyring
	allowPlaintext bool
	allowUnbound   bool // read LangGraph's "aes" values, which are bound to nothing
	opts           []EncryptedOption
}

// EncryptedOption configures an Encrypted.
type EncryptedOption func(*encryptedConfig)

type encryptedConfig struct {
	langGraph      bool
	mode           crypto.Mode
	allowPlaintext bool
	allowUnbound   bool
}

// WithDangerousPlaintextReads makes LoadsTyped accept values that carry no
// cipher suffix (and decode them with the inner serializer), for reading a
// database written before encryption was turned on. It is dangerous: whoever
// can write to the database can then inject values that are read as if
// they had been encrypted. Turn it off once `keys reencrypt` has rewritten
// the old rows (MEMVAULT_ALLOW_PLAINTEXT is its environment switch).
func WithDangerousPlaintextReads() EncryptedOption {
	return func(c *encryptedConfig) { c.allowPlaintext = true }
}

// WithDangerousUnboundAESReads makes a serializer in envelope mode read
// values in LangGraph's "aes" format too. Such values are bound to no row:
// whoever can write the database can copy one under another thread,
// channel, pending write or store key — another user's, say — and it will
// decrypt there. Use it only for the migration out of LangGraph mode:
// `memvault keys reencrypt` with it rewrites every "aes" row into the
// envelope, after which it should be turned off (and, since old "aes"
// ciphertexts of the same key may survive in backups, the key rotated).
// WithDangerousLangGraphAES implies it.
func WithDangerousUnboundAESReads() EncryptedOption {
	return func(c *encryptedConfig) { c.allowUnbound = true }
}

// WithDangerousLangGraphAES makes the serializer write LangGraph's "aes"
// format with mode, for a database shared with Python LangGraph. Dangerous:
// the format carries no associated data, so a ciphertext is bound to no
// row — whoever can write the database can move one under another thread,
// channel, pending write or store key (another user's, say), and it
// decrypts there (see WithDangerousUnboundAESReads).
// Python reads ModeGCM when configured with mode=AES.MODE_GCM, ModeEAX with
// its default configuration. Reading tries mode first, then the other.
func WithDangerousLangGraphAES(mode crypto.Mode) EncryptedOption {
	return func(c *encryptedConfig) { c.langGraph, c.mode = true, mode }
}

// NewEncrypted returns an Encrypted serializer over inner (JSONPlus when
// nil) with the keys of ring: it encrypts with the primary key and decrypts
// with any.
func NewEncrypted(inner Serializer, ring *crypto.Keyring, opts ...EncryptedOption) (*Encrypted, error) {
	if ring == nil {
		return nil, errors.New("serde: NewEncrypted: nil keyring")
	}
	var cfg encryptedConfig
	for _, o := range opts {
		o(&cfg)
	}
	if inner == nil {
		inner = JSONPlus{}
	}
	env, err := aead.NewEnvelope(ring)
	if err != nil {
		return nil, fmt.Errorf("serde: %w", err)
	}
	aes, err := aead.NewAES(ring, cfg.mode)
	if err != nil {
		return nil, fmt.Errorf("serde: %w", err)
	}
	e := &Encrypted{
		inner:          inner,
		write:          env,
		read:           map[string]aead.Cipher{env.Name(): env, aes.Name(): aes},
		ring:           ring,
		allowPlaintext: cfg.allowPlaintext,
		allowUnbound:   cfg.allowUnbound || cfg.langGraph,
		opts:           append([]EncryptedOption(nil), opts...),
	}
	if cfg.langGraph {
		e.write = aes
	}
	e.tags = make(map[string]string)
	for _, t := range []string{TypeJSON, TypeMsgpack, TypeBytes, TypeByteArray, TypeNull} {
		e.tags[t] = t + "+" + e.write.Name()
	}
	return e, nil
}

// EncryptedFromEnv is NewEncrypted with the keyring of
// crypto.KeyringFromEnv: LANGGRAPH_AES_KEY (read as LangGraph reads it, with
// LangGraph's error texts) and LANGGRAPH_AES_KEY_PREVIOUS.
func EncryptedFromEnv(inner Serializer, opts ...EncryptedOption) (*Encrypted, error) {
	ring, err := crypto.KeyringFromEnv()
	if err != nil {
		return nil, fmt.Errorf("serde: %w", err)
	}
	return NewEncrypted(inner, ring, opts...)
}

// WithKeyring returns a serializer like e — the same inner serializer,
// cipher and read policy — whose keys are ring's. memvault's key hierarchy
// (package keys) makes one per data subject.
func (e *Encrypted) WithKeyring(ring *crypto.Keyring) (*Encrypted, error) {
	return NewEncrypted(e.inner, ring, e.opts...)
}

// CipherName returns the name of the cipher values are written with
// ("mvgcm" or "aes").
func (e *Encrypted) CipherName() string { return e.write.Name() }

// Keyring returns the serializer's keys.
func (e *Encrypted) Keyring() *crypto.Keyring { return e.ring }

// DumpsTyped is DumpsTypedWith without associated data.
func (e *Encrypted) DumpsTyped(v any) (string, []byte, error) { return e.DumpsTypedWith(v, nil) }

// LoadsTyped is LoadsTypedWith without associated data.
func (e *Encrypted) LoadsTyped(typ string, data []byte) (any, error) {
	return e.LoadsTypedWith(typ, data, nil)
}

// DumpsTypedWith encodes v with the inner serializer and encrypts the
// payload (an empty one too, as LangGraph does for "null"), binding it to
// aad unless the cipher is LangGraph's "aes". With JSONPlus or MsgPack
// inside, the plaintext is encoded in a buffer of its own, zeroed once
// sealed (or once the encoding failed); another inner serializer's payload
// is sealed as it returns it and left as it is, since it may be memory the
// caller owns.
func (e *Encrypted) DumpsTypedWith(v any, aad []byte) (string, []byte, error) {
	var typ string
	var data []byte
	switch b, isBytes := v.([]byte); {
	case isBytes && builtinCodec(e.inner):
		// The built-in codecs copy raw bytes; encrypting copies anyway.
		typ, data = TypeBytes, b
	case builtinCodec(e.inner):
		// The plaintext lives until it is sealed: encode it in a
		// reused buffer, wiped on every path — a failed encoding's
		// prefix and the pooled memory an encoding outgrew too.
		bp := scratch.Get().(*[]byte)
		pooled := (*bp)[:cap(*bp)]
		var err error
		if isJSONPlus(e.inner) {
			typ, *bp, err = appendJSONPlus((*bp)[:0], v)
		} else {
			typ, *bp, err = appendMsgPack((*bp)[:0], v)
		}
		defer wipeEncoded(bp, pooled)
		if err != nil {
			return "", nil, err
		}
		data = *bp
	default:
		// Another codec's payload is not wiped: it may be memory the
		// caller still owns (a codec may return the value's own bytes),
		// and what the codec wrote on its way is out of reach anyway.
		var err error
		if typ, data, err = e.inner.DumpsTyped(v); err != nil {
			return "", nil, err
		}
	}
	cp := cipherAAD(e.write.Name(), typ, aad)
	ct, err := e.write.Encrypt(data, *cp)
	putScratch(cp)
	if err != nil {
		return "", nil, fmt.Errorf("serde: encrypt: %w", err)
	}
	if tag, ok := e.tags[typ]; ok {
		return tag, ct, nil
	}
	return typ + "+" + e.write.Name(), ct, nil
}

// LoadsTypedWith decrypts and decodes a value dumped with the same aad.
func (e *Encrypted) LoadsTypedWith(typ string, data, aad []byte) (any, error) {
	if v, done, err := e.loadEnvelopeJSON(typ, data, aad); done {
		return v, err
	}
	p, innerTyp, id, err := e.open(typ, data, aad)
	if err != nil {
		return nil, err
	}
	if id != nil && (innerTyp == TypeBytes || innerTyp == TypeByteArray) && builtinCodec(e.inner) {
		return p, nil // freshly decrypted: no need to copy again
	}
	return e.inner.LoadsTyped(innerTyp, p)
}

// loadEnvelopeJSON is LoadsTypedWith for the most common value, JSONPlus
// JSON in memvault's envelope, opened into a reused buffer: the JSON
// decoder copies what it keeps, so the plaintext is garbage as soon as it
// is decoded. done is false for any other value.
func (e *Encrypted) loadEnvelopeJSON(typ string, data, aad []byte) (v any, done bool, err error) {
	if typ != TypeJSON+"+"+aead.EnvelopeName || !isJSONPlus(e.inner) {
		return nil, false, nil
	}
	env, ok := e.read[aead.EnvelopeName].(*aead.Envelope)
	if !ok {
		return nil, false, nil
	}
	cp := cipherAAD(aead.EnvelopeName, TypeJSON, aad)
	bp := scratch.Get().(*[]byte)
	p, _, err := env.DecryptKeyAppend((*bp)[:0], data, *cp)
	putScratch(cp)
	if err != nil {
		putScratch(bp)
		return nil, true, ErrDecrypt
	}
	v, err = decodeJSON(p)
	*bp = p
	wipeScratch(bp)
	return v, true, err
}

// open decrypts; for plaintext values (when allowed) it returns data as is
// and an empty cipher.
func (e *Encrypted) open(typ string, data, aad []byte) (plain []byte, innerTyp string, id *crypto.KeyID, err error) {
	innerTyp, cipherName, ok := strings.Cut(typ, "+")
	if !ok {
		if e.allowPlaintext {
			return data, typ, nil, nil
		}
		return nil, "", nil, fmt.Errorf("%w: %s", ErrPlaintextRefused, idlimit.Name("type", typ))
	}
	c, ok := e.read[cipherName]
	if !ok {
		return nil, "", nil, fmt.Errorf("%w: %s in %s", ErrUnknownType, idlimit.Name("cipher", cipherName), idlimit.Name("type", typ))
	}
	if cipherName == aead.AESName && !e.allowUnbound {
		return nil, "", nil, fmt.Errorf("%w: %s", ErrUnboundRefused, idlimit.Name("type", typ))
	}
	kc := c.(aead.KeyedCipher)
	cp := cipherAAD(cipherName, innerTyp, aad)
	p, kid, err := kc.DecryptKey(data, *cp)
	putScratch(cp)
	if err != nil {
		return nil, "", nil, ErrDecrypt
	}
	return p, innerTyp, &kid, nil
}

// SealedKeyID returns the id (hex, as crypto.KeyID.String) of the key a
// value sealed in memvault's envelope names in its header, and true; false
// for any other value (plaintext, LangGraph's "aes", a malformed header).
// The header is not authenticated here: the id is what the value claims,
// for telling a value sealed under a destroyed key from a damaged one,
// never for trusting it.
func SealedKeyID(typ string, data []byte) (string, bool) {
	_, cipherName, ok := strings.Cut(typ, "+")
	if !ok || cipherName != aead.EnvelopeName {
		return "", false
	}
	id, err := aead.EnvelopeKeyID(data)
	if err != nil {
		return "", false
	}
	return id.String(), true
}

// cipherAAD is the associated data given to the cipher. For the envelope it
// binds the inner tag too, so "json+mvgcm" cannot be relabelled
// "msgpack+mvgcm": uvarint(len(tag)) ‖ tag ‖ aad. LangGraph's "aes" has
// none. It is built in a buffer from scratch, to give back with putScratch
// once the cipher is done with it.
func cipherAAD(cipherName, innerTyp string, aad []byte) *[]byte {
	bp := scratch.Get().(*[]byte)
	b := (*bp)[:0]
	if cipherName != aead.AESName {
		b = binary.AppendUvarint(b, uint64(len(innerTyp)))
		b = append(b, innerTyp...)
		b = append(b, aad...)
	}
	*bp = b
	return bp
}

// scratch holds reusable buffers for what lives only during one call
// (associated data, a plaintext until it is sealed).
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putScratch puts a buffer back in scratch unless it grew too large to be
// worth keeping alive.
func putScratch(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		scratch.Put(bp)
	}
}

// wipeScratch zeroes a buffer that held plaintext and puts it back, so
// that no plaintext lingers in the pool.
func wipeScratch(bp *[]byte) {
	clear(*bp)
	putScratch(bp)
}

// wipeEncoded zeroes a plaintext encoding made from a scratch buffer and
// puts it back: the bytes written (*bp; a failed encoding returns what
// it wrote, so they are wiped too) and, when the encoding outgrew the
// pooled buffer, that buffer's memory, pooled, which holds the encoding's
// first bytes. (The encoders wipe every array they outgrow, the pooled
// one included, as they grow: see moved; this is for a buffer filled
// otherwise.)
func wipeEncoded(bp *[]byte, pooled []byte) {
	if len(pooled) > 0 && (cap(*bp) == 0 || &(*bp)[:1][0] != &pooled[0]) {
		clear(pooled)
	}
	wipeScratch(bp)
}

// KeyInfo describes how a stored value is protected; see Inspect.
type KeyInfo struct {
	// Cipher is the value's cipher name, "" for plaintext.
	Cipher string
	// KeyID is the key that opened the value (zero for plaintext).
	KeyID crypto.KeyID
	// Primary reports whether KeyID is the keyring's primary key.
	Primary bool
}

// Inspect decrypts a stored value (without decoding it) and reports which
// cipher and key protect it. Plaintext values are reported only when
// WithDangerousPlaintextReads is set (otherwise ErrPlaintextRefused); an "empty"
// marker is reported as plaintext. Errors are as for LoadsTypedWith.
func (e *Encrypted) Inspect(typ string, data, aad []byte) (KeyInfo, error) {
	if typ == TypeEmpty {
		return KeyInfo{}, nil
	}
	_, _, id, err := e.open(typ, data, aad)
	if err != nil {
		return KeyInfo{}, err
	}
	if id == nil {
		return KeyInfo{}, nil
	}
	_, name, _ := strings.Cut(typ, "+")
	return KeyInfo{Cipher: name, KeyID: *id, Primary: e.ring.IsPrimary(*id)}, nil
}

// NeedsReencrypt reports whether a stored value should be rewritten by a
// key rotation ("keys reencrypt"): it is plaintext (when plaintext reads
// are allowed), written with another cipher than the one this serializer
// writes, or opened by a key other than the primary one. A value that does
// not decrypt is an error (ErrDecrypt), never silently skipped.
func (e *Encrypted) NeedsReencrypt(typ string, data, aad []byte) (bool, error) {
	if typ == TypeEmpty {
		return false, nil
	}
	info, err := e.Inspect(typ, data, aad)
	if err != nil {
		return false, err
	}
	return info.Cipher != e.write.Name() || !info.Primary, nil
}

func builtinCodec(s Serializer) bool {
	switch s.(type) {
	case JSONPlus, MsgPack, *JSONPlus, *MsgPack:
		return true
	}
	return false
}

var _ BoundSerializer = (*Encrypted)(nil)
