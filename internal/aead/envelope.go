package aead

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/keyaccess"

	lru "github.com/hashicorp/golang-lru/v2"
)

// EnvelopeName is the name of memvault's envelope cipher.
const EnvelopeName = "mvgcm"

// Envelope format constants (version 1); see the package documentation.
const (
	EnvelopeV1       = 0x01
	envSaltSize      = 32
	envNonceSize     = 12
	envHeaderSize    = 1 + crypto.KeyIDSize + envSaltSize + envNonceSize
	envTagSize       = 16
	envelopeOverhead = envHeaderSize + envTagSize
)

// envDomain is the HKDF-Extract salt and the prefix of every HKDF-Expand
// info.
const envDomain = "memvault/envelope/v1"

// Envelope is memvault's default cipher: AES-256-GCM under record keys
// derived with HKDF-SHA256 from the keyring's master key and a random salt
// (a new salt every RecordsPerSalt records), a key id naming the master
// key, and caller associated data. See the package
// documentation for the byte layout.
type Envelope struct {
	ring *crypto.Keyring
	keys map[crypto.KeyID]*envKey
	rand func([]byte) error
	// records caches the AEADs of recently opened records, keyed
	// by what determines their key (version, key id, salt). Agents re-read
	// the same values at every step (a channel keeps its blob across many
	// checkpoints), and deriving a record key and setting up AES-GCM costs
	// more than opening a small value. The cache holds derived record keys
	// in memory, as the master keys already are; it changes no result.
	records *lru.Cache[recordID, cipher.AEAD]

	// seal is the record key new records are sealed under; sealMu
	// serialises its replacement.
	seal   atomic.Pointer[sealer]
	sealMu sync.Mutex
}

// recordID is what a record key is derived from: an envelope header
// without its nonce.
type recordID [1 + crypto.KeyIDSize + envSaltSize]byte

// RecordCacheSize is how many record AEADs (one per salt) an Envelope keeps (about 1.2 KB
// each).
const RecordCacheSize = 4096

// envKey holds a master key's HKDF pseudorandom key, PRK =
// HKDF-Extract(salt = envDomain, IKM = master key), computed once, and a
// pool of HMAC-SHA256(PRK) states for HKDF-Expand.
type envKey struct {
	id   crypto.KeyID
	prk  []byte
	pool sync.Pool // hash.Hash
}

func newEnvKey(k *crypto.Key) (*envKey, error) {
	prk, err := hkdf.Extract(sha256.New, k.Material(keyaccess.Token{}), []byte(envDomain))
	if err != nil {
		return nil, fmt.Errorf("crypto: hkdf: %v", err)
	}
	ek := &envKey{id: k.ID(), prk: prk}
	ek.pool.New = func() any { return hmac.New(sha256.New, ek.prk) }
	return ek, nil
}

// recordKey is HKDF-Expand(PRK, info, 32) with info = envDomain ‖ header
// (version, key id, salt): a single HMAC block, T(1) = HMAC(PRK, info ‖ 0x01).
func (ek *envKey) recordKey(dst *[32]byte, header []byte) {
	h := ek.pool.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(envDomain))
	h.Write(header[:1+crypto.KeyIDSize+envSaltSize])
	h.Write([]byte{1})
	h.Sum(dst[:0])
	ek.pool.Put(h)
}

// NewEnvelope returns the envelope cipher over ring.
func NewEnvelope(ring *crypto.Keyring) (*Envelope, error) {
	if ring == nil {
		return nil, fmt.Errorf("crypto: nil keyring")
	}
	records, err := lru.New[recordID, cipher.AEAD](RecordCacheSize)
	if err != nil {
		return nil, fmt.Errorf("crypto: %v", err)
	}
	e := &Envelope{ring: ring, keys: make(map[crypto.KeyID]*envKey, len(ring.Keys())), rand: randRead, records: records}
	for _, k := range ring.Keys() {
		ek, err := newEnvKey(k)
		if err != nil {
			return nil, err
		}
		e.keys[k.ID()] = ek
	}
	return e, nil
}

// Name returns "mvgcm".
func (e *Envelope) Name() string { return EnvelopeName }

// Keyring returns the cipher's keys.
func (e *Envelope) Keyring() *crypto.Keyring { return e.ring }

// Encrypt seals plaintext under the primary key, bound to aad.
func (e *Envelope) Encrypt(plaintext, aad []byte) ([]byte, error) {
	s, err := e.sealer()
	if err != nil {
		return nil, err
	}
	out := make([]byte, envHeaderSize, envelopeOverhead+len(plaintext))
	copy(out, s.id[:])
	nonce := out[len(s.id):envHeaderSize]
	if err := e.rand(nonce); err != nil {
		return nil, fmt.Errorf("crypto: random nonce: %w", err)
	}
	buf := headerAAD(out[:envHeaderSize], aad)
	out = s.aead.Seal(out, nonce, plaintext, *buf)
	putScratch(buf)
	return out, nil
}

// RecordsPerSalt is how many records an Envelope seals under one salt, and
// so under one derived record key, before it draws a new salt. Deriving a
// record key and setting up AES-GCM costs more than sealing a small value,
// so a salt is reused; what bounds the reuse is the chance that two records
// under one key draw the same random 96-bit nonce, about n²/2⁹⁷: 2⁻⁵⁷ for
// 2²⁰ records, far inside NIST SP 800-38D's limit of 2³² random-nonce
// invocations per key.
const RecordsPerSalt = 1 << 20

// sealer is a record key in use for sealing: the header prefix it was
// derived from (version, key id, salt), its AEAD, and how many more records
// it may seal.
type sealer struct {
	id   recordID
	aead cipher.AEAD
	left atomic.Int64
}

// sealer returns the record key to seal the next record under, drawing a
// new salt once the current one has sealed RecordsPerSalt records.
func (e *Envelope) sealer() (*sealer, error) {
	if s := e.seal.Load(); s != nil && s.left.Add(-1) >= 0 {
		return s, nil
	}
	e.sealMu.Lock()
	defer e.sealMu.Unlock()
	if s := e.seal.Load(); s != nil && s.left.Add(-1) >= 0 {
		return s, nil // another goroutine replaced it first
	}
	k := e.ring.Primary()
	s := &sealer{}
	s.id[0] = EnvelopeV1
	id := k.ID()
	copy(s.id[1:], id[:])
	if err := e.rand(s.id[1+crypto.KeyIDSize:]); err != nil {
		return nil, fmt.Errorf("crypto: random salt: %w", err)
	}
	g, err := e.keys[k.ID()].recordAEAD(s.id[:])
	if err != nil {
		return nil, err
	}
	s.aead = g
	s.left.Store(RecordsPerSalt - 1) // this call seals the first
	// Records written here are often read back here (the next step of a
	// graph loads the values the last one wrote).
	e.records.Add(s.id, g)
	e.seal.Store(s)
	return s, nil
}

// recordAEAD returns the AEAD of the record whose header is given, from
// the cache or derived (and cached), for opening.
func (e *Envelope) recordAEAD(ek *envKey, header []byte) (cipher.AEAD, error) {
	var id recordID
	copy(id[:], header)
	if s := e.seal.Load(); s != nil && s.id == id {
		return s.aead, nil // sealed here lately: no cache lock
	}
	if g, ok := e.records.Get(id); ok {
		return g, nil
	}
	g, err := ek.recordAEAD(header)
	if err != nil {
		return nil, err
	}
	e.records.Add(id, g)
	return g, nil
}

// headerAAD returns header ‖ aad (the header has a fixed size, so the join
// is unambiguous) in a buffer from scratch; putScratch returns it once the
// AEAD call is done with it.
func headerAAD(header, aad []byte) *[]byte {
	bp := scratch.Get().(*[]byte)
	*bp = append(append((*bp)[:0], header...), aad...)
	return bp
}

// scratch holds reusable buffers for associated data, which every seal and
// open builds and no AEAD keeps.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// putScratch puts a buffer back in scratch, unless a rare huge associated
// data made it large enough not to be worth keeping.
func putScratch(bp *[]byte) {
	if cap(*bp) <= maxScratch {
		scratch.Put(bp)
	}
}

// maxScratch is the largest buffer put back in scratch: a rare huge
// associated data is not kept alive by the pool.
const maxScratch = 4 << 10

func (ek *envKey) recordAEAD(header []byte) (cipher.AEAD, error) {
	var rk [32]byte
	ek.recordKey(&rk, header)
	b, err := aes.NewCipher(rk[:])
	if err != nil {
		return nil, fmt.Errorf("crypto: aes: %v", err)
	}
	return cipher.NewGCM(b)
}

// Decrypt opens an envelope bound to aad.
func (e *Envelope) Decrypt(ciphertext, aad []byte) ([]byte, error) {
	p, _, err := e.DecryptKey(ciphertext, aad)
	return p, err
}

// DecryptKey opens an envelope and reports the id of the key that opened it.
func (e *Envelope) DecryptKey(env, aad []byte) ([]byte, crypto.KeyID, error) {
	return e.DecryptKeyAppend(nil, env, aad)
}

// DecryptKeyAppend is DecryptKey appending the plaintext to dst, for
// callers that reuse a buffer. dst must not overlap env.
func (e *Envelope) DecryptKeyAppend(dst, env, aad []byte) ([]byte, crypto.KeyID, error) {
	id, err := EnvelopeKeyID(env)
	if err != nil {
		return nil, crypto.KeyID{}, err
	}
	ek, ok := e.keys[id]
	if !ok {
		return nil, crypto.KeyID{}, crypto.ErrDecrypt
	}
	g, err := e.recordAEAD(ek, env[:envHeaderSize])
	if err != nil {
		return nil, crypto.KeyID{}, crypto.ErrDecrypt
	}
	nonce := env[1+crypto.KeyIDSize+envSaltSize : envHeaderSize]
	buf := headerAAD(env[:envHeaderSize], aad)
	p, err := g.Open(dst, nonce, env[envHeaderSize:], *buf)
	putScratch(buf)
	if err != nil {
		return nil, crypto.KeyID{}, crypto.ErrDecrypt
	}
	if p == nil {
		p = []byte{}
	}
	return p, id, nil
}

// EnvelopeKeyID parses an envelope's header and returns the id of the key it
// claims; it does not authenticate anything. A malformed header is
// ErrDecrypt.
func EnvelopeKeyID(env []byte) (crypto.KeyID, error) {
	var id crypto.KeyID
	if len(env) < envelopeOverhead || env[0] != EnvelopeV1 {
		return id, crypto.ErrDecrypt
	}
	copy(id[:], env[1:1+crypto.KeyIDSize])
	return id, nil
}
