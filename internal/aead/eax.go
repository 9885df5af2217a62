package aead

import (
	"crypto/cipher"
	"crypto/subtle"
	"errors"
)

// eax implements the EAX mode of Bellare, Rogaway and Wagner over a 128-bit
// block cipher, with a 16-byte tag. Go's standard library has no EAX; this is
// the mode pycryptodome (and therefore LangGraph by default) uses.
//
//	N' = OMAC_0(nonce)   (also the initial big-endian counter)
//	H' = OMAC_1(header)
//	C  = CTR_{N'}(plaintext)
//	C' = OMAC_2(C)
//	tag = N' ^ H' ^ C'
//
// where OMAC_t(M) = CMAC(15 zero bytes ‖ t ‖ M).
type eax struct {
	b      cipher.Block
	k1, k2 [16]byte // CMAC subkeys
}

const eaxTagSize = 16

func newEAX(b cipher.Block) *eax {
	e := &eax{b: b}
	var l [16]byte
	b.Encrypt(l[:], l[:])
	e.k1 = dbl(l)
	e.k2 = dbl(e.k1)
	return e
}

// dbl is multiplication by x in GF(2^128) as CMAC defines it.
func dbl(in [16]byte) [16]byte {
	var out [16]byte
	carry := in[0] >> 7
	for i := 0; i < 15; i++ {
		out[i] = in[i]<<1 | in[i+1]>>7
	}
	out[15] = in[15]<<1 ^ (0x87 & -carry)
	return out
}

// omac returns CMAC(t-block ‖ m).
func (e *eax) omac(t byte, m []byte) [16]byte {
	var x [16]byte
	x[15] = t
	if len(m) == 0 {
		// The tweak block is the last (complete) block.
		for i := range x {
			x[i] ^= e.k1[i]
		}
		e.b.Encrypt(x[:], x[:])
		return x
	}
	e.b.Encrypt(x[:], x[:])
	for len(m) > 16 {
		subtle.XORBytes(x[:], x[:], m[:16])
		e.b.Encrypt(x[:], x[:])
		m = m[16:]
	}
	var last [16]byte
	copy(last[:], m)
	if len(m) == 16 {
		subtle.XORBytes(last[:], last[:], e.k1[:])
	} else {
		last[len(m)] = 0x80
		subtle.XORBytes(last[:], last[:], e.k2[:])
	}
	subtle.XORBytes(x[:], x[:], last[:])
	e.b.Encrypt(x[:], x[:])
	return x
}

// seal encrypts plaintext into dst (len(plaintext) bytes) and returns the tag.
func (e *eax) seal(dst, nonce, plaintext, header []byte) [16]byte {
	n := e.omac(0, nonce)
	h := e.omac(1, header)
	cipher.NewCTR(e.b, n[:]).XORKeyStream(dst, plaintext)
	c := e.omac(2, dst[:len(plaintext)])
	var tag [16]byte
	for i := range tag {
		tag[i] = n[i] ^ h[i] ^ c[i]
	}
	return tag
}

var errEAXAuth = errors.New("crypto: eax: message authentication failed")

// open checks tag and decrypts ciphertext into dst.
func (e *eax) open(dst, nonce, ciphertext, header, tag []byte) error {
	n := e.omac(0, nonce)
	h := e.omac(1, header)
	c := e.omac(2, ciphertext)
	var want [16]byte
	for i := range want {
		want[i] = n[i] ^ h[i] ^ c[i]
	}
	if len(tag) > eaxTagSize || len(tag) == 0 || subtle.ConstantTimeCompare(want[:len(tag)], tag) != 1 {
		return errEAXAuth
	}
	cipher.NewCTR(e.b, n[:]).XORKeyStream(dst, ciphertext)
	return nil
}
