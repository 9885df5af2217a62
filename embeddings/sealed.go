package embeddings

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// SealKeySize is the length of the secret NewSealed takes.
const SealKeySize = 32

// sealRounds is how many sign–permute–Hadamard rounds a Sealed applies.
// One round already spreads every input coordinate over a whole
// power-of-two block; the permutations between rounds carry it across
// blocks, so after three rounds every output coordinate depends on every
// input coordinate of any common embedding size.
const sealRounds = 3

// Sealed wraps an Embedder and applies a secret orthogonal transform — a
// rotation of the vector space chosen by a key (see Rotation) — to every
// vector it returns, documents and queries alike.
//
// An orthogonal transform Q keeps every inner product (⟨Qx, Qy⟩ = ⟨x, y⟩),
// hence every norm, cosine and L2 distance: scores, rankings and the ANN
// indexes of pgvector work on sealed vectors exactly as on the model's own
// (up to float32 rounding, about 1e-7 relative). What changes is the space:
// a stored vector is no longer in the model's coordinates, so whoever
// copies the database cannot compare it with vectors the public model
// computes for candidate texts, nor feed it to an inversion model trained on
// that model's outputs. It does not hide which stored vectors are close to
// each other, and an attacker who holds many (text, stored vector) pairs of
// the same key can solve for the rotation (d linearly independent pairs
// determine it).
//
// A Sealed is safe for concurrent use.
type Sealed struct {
	inner Embedder
	name  string
	rot   *Rotation
}

var _ Embedder = (*Sealed)(nil)

// NewSealed returns inner with every vector sealed by the transform that
// secret (SealKeySize bytes, e.g. derived from the master key) selects.
// keyID names the secret's origin and goes into Name,
// "<inner name>+sealed:<keyID>", so a store records which key sealed its
// vectors and refuses queries sealed by another.
func NewSealed(inner Embedder, secret []byte, keyID string) (*Sealed, error) {
	rot, err := NewRotation(secret, inner.Dims())
	if err != nil {
		return nil, fmt.Errorf("embeddings: sealed: %w", err)
	}
	return &Sealed{inner: inner, name: inner.Name() + "+sealed:" + keyID, rot: rot}, nil
}

// Rotation is a secret orthogonal transform of d-dimension vectors, chosen
// by a key: Sealed applies one under a master-derived key, and memvault's
// stores apply one more to each data subject's vectors, under a key derived
// from the subject's own data key (see keys.Hierarchy.SubjectRotation).
//
// It is the product of sealRounds rounds of: multiply each coordinate by a
// secret sign, apply a secret permutation, then an orthonormal
// Walsh–Hadamard transform on each block of a fixed split of the dimension
// into powers of two (1536 = 1024 + 512). Each step is orthogonal, so the
// product is; each round costs O(d log d) and no d×d matrix is stored (a
// Rotation holds 4.1 bytes per dimension and round: 19 KB at 1536
// dimensions). Signs and permutations come from AES-CTR keyed by the
// secret; the same secret selects the same transform in every build.
//
// A Rotation is immutable and safe for concurrent use.
type Rotation struct {
	dims   int
	blocks []int // sizes of the Hadamard blocks, powers of two summing to dims
	rounds [sealRounds]sealRound
}

type sealRound struct {
	// perm: output i takes input perm[i]; signs: bit j set when input j
	// is negated.
	perm  []int32
	signs []uint64
}

// NewRotation returns the rotation of dims-dimension vectors that secret
// (SealKeySize bytes) selects.
func NewRotation(secret []byte, dims int) (*Rotation, error) {
	if len(secret) != SealKeySize {
		return nil, fmt.Errorf("rotation: secret of %d bytes, want %d", len(secret), SealKeySize)
	}
	if dims < 1 {
		return nil, fmt.Errorf("rotation: %d dimensions", dims)
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, fmt.Errorf("rotation: %w", err)
	}
	ks := newKeyStream(cipher.NewCTR(block, make([]byte, aes.BlockSize)))
	r := &Rotation{dims: dims}
	for rest := uint(dims); rest > 0; {
		b := 1 << (bits.Len(rest) - 1) // largest power of two left
		r.blocks = append(r.blocks, b)
		rest -= uint(b)
	}
	rnd := ks.uniform
	for i := range r.rounds {
		signs := make([]uint64, (dims+63)/64)
		for j := range dims {
			if rnd(2) == 1 {
				signs[j>>6] |= 1 << (uint(j) & 63)
			}
		}
		perm := make([]int32, dims)
		for j := range perm {
			perm[j] = int32(j)
		}
		for j := dims - 1; j > 0; j-- { // Fisher–Yates
			k := rnd(uint64(j) + 1)
			perm[j], perm[k] = perm[k], perm[j]
		}
		r.rounds[i] = sealRound{perm: perm, signs: signs}
	}
	return r, nil
}

// Dims is the length of the vectors r transforms.
func (r *Rotation) Dims() int { return r.dims }

// Apply returns the transform of v, which must have Dims values; v is not
// modified.
func (r *Rotation) Apply(v []float32) ([]float32, error) {
	if len(v) != r.dims {
		return nil, fmt.Errorf("embeddings: rotation: %w: got %d, want %d", ErrDimensionMismatch, len(v), r.dims)
	}
	x := make([]float64, r.dims)
	y := make([]float64, r.dims)
	for i, f := range v {
		x[i] = float64(f)
	}
	for _, rd := range r.rounds {
		for i, j := range rd.perm {
			// Negation is exact: this is x[j] times a sign of ±1.
			y[i] = math.Float64frombits(math.Float64bits(x[j]) ^ (rd.signs[j>>6]>>(uint(j)&63)&1)<<63)
		}
		off := 0
		for _, b := range r.blocks {
			fwht(y[off : off+b])
			off += b
		}
		x, y = y, x
	}
	out := make([]float32, r.dims)
	for i, f := range x {
		out[i] = float32(f)
	}
	return out, nil
}

// keyStream reads a cipher stream's key stream 8 bytes at a time, from a
// buffer filled a block of bytes at a time (the same bytes as reading them
// one by one: a CTR key stream does not depend on how it is cut).
type keyStream struct {
	stream cipher.Stream
	buf    [512]byte
	pos    int // next unread byte of buf; len(buf): refill
}

func newKeyStream(s cipher.Stream) *keyStream {
	k := &keyStream{stream: s}
	k.pos = len(k.buf)
	return k
}

func (k *keyStream) next() uint64 {
	if k.pos == len(k.buf) {
		clear(k.buf[:])
		k.stream.XORKeyStream(k.buf[:], k.buf[:])
		k.pos = 0
	}
	v := binary.LittleEndian.Uint64(k.buf[k.pos:])
	k.pos += 8
	return v
}

// uniform draws a uniform integer in [0, n) from the key stream, without
// modulo bias (rejection sampling).
func (k *keyStream) uniform(n uint64) uint64 {
	limit := math.MaxUint64 - math.MaxUint64%n
	for {
		if v := k.next(); v < limit {
			return v % n
		}
	}
}

// Dims is the inner embedder's.
func (s *Sealed) Dims() int { return s.rot.dims }

// Name is "<inner name>+sealed:<key id>".
func (s *Sealed) Name() string { return s.name }

// EmbedDocuments embeds with the inner embedder and seals each vector.
func (s *Sealed) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := s.inner.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if out[i], err = s.Seal(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EmbedQuery embeds with the inner embedder and seals the vector.
func (s *Sealed) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := s.inner.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	return s.Seal(v)
}

// Seal applies the transform to v, which must have Dims values; v is not
// modified.
func (s *Sealed) Seal(v []float32) ([]float32, error) {
	if len(v) != s.rot.dims {
		return nil, fmt.Errorf("embeddings: sealed: %w: got %d, want %d", ErrDimensionMismatch, len(v), s.rot.dims)
	}
	return s.rot.Apply(v)
}

// fwht applies the orthonormal Walsh–Hadamard transform to a, whose length
// is a power of two, in place.
func fwht(a []float64) {
	n := len(a)
	for h := 1; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			for j := i; j < i+h; j++ {
				x, y := a[j], a[j+h]
				a[j], a[j+h] = x+y, x-y
			}
		}
	}
	scale := 1 / math.Sqrt(float64(n))
	for i := range a {
		a[i] *= scale
	}
}
