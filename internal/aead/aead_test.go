package aead

import (
	"bytes"
	"crypto/aes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/crypto"
)

const katKey = "0123456789abcdef0123456789abcdef"

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ring(t testing.TB, primary string, previous ...string) *crypto.Keyring {
	t.Helper()
	p, err := crypto.ParseKey(primary)
	if err != nil {
		t.Fatal(err)
	}
	var prev []*crypto.Key
	for _, s := range previous {
		k, err := crypto.ParseKey(s)
		if err != nil {
			t.Fatal(err)
		}
		prev = append(prev, k)
	}
	r, err := crypto.NewKeyring(p, prev...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fixedRand returns a rand func writing 0, 1, 2, ... into each buffer.
func fixedRand(b []byte) error {
	for i := range b {
		b[i] = byte(i)
	}
	return nil
}

// TestEAXPaperVectors checks the EAX implementation against the test vectors
// of Bellare, Rogaway and Wagner, "The EAX mode of operation" (2004),
// appendix: AES-128, 16-byte nonce and tag, 8-byte header.
func TestEAXPaperVectors(t *testing.T) {
	vectors := []struct{ key, nonce, header, msg, ct string }{
		{"233952DEE4D5ED5F9B9C6D6FF80FF478", "62EC67F9C3A4A407FCB2A8C49031A8B3", "6BFB914FD07EAE6B", "", "E037830E8389F27B025A2D6527E79D01"},
		{"91945D3F4DCBEE0BF45EF52255F095A4", "BECAF043B0A23D843194BA972C66DEBD", "FA3BFD4806EB53FA", "F7FB", "19DD5C4C9331049D0BDAB0277408F67967E5"},
		{"01F74AD64077F2E704C0F60ADA3DD523", "70C3DB4F0D26368400A10ED05D2BFF5E", "234A3463C1264AC6", "1A47CB4933", "D851D5BAE03A59F238A23E39199DC9266626C40F80"},
		{"D07CF6CBB7F313BDDE66B727AFD3C5E8", "8408DFFF3C1A2B1292DC199E46B7D617", "33CCE2EABFF5A79D", "481C9E39B1", "632A9D131AD4C168A4225D8E1FF755939974A7BEDE"},
		{"35B6D0580005BBC12B0587124557D2C2", "FDB6B06676EEDC5C61D74276E1F8E816", "AEB96EAEBE2970E9", "40D0C07DA5E4", "071DFE16C675CB0677E536F73AFE6A14B74EE49844DD"},
		{"BD8E6E11475E60B268784C38C62FEB22", "6EAC5C93072D8E8513F750935E46DA1B", "D4482D1CA78DCE0F", "4DE3B35C3FC039245BD1FB7D", "835BB4F15D743E350E728414ABB8644FD6CCB86947C5E10590210A4F"},
		{"7C77D6E813BED5AC98BAA417477A2E7D", "1A8C98DCD73D38393B2BF1569DEEFC19", "65D2017990D62528", "8B0A79306C9CE7ED99DAE4F87F8DD61636", "02083E3979DA014812F59F11D52630DA30137327D10649B0AA6E1C181DB617D7F2"},
		{"5FFF20CAFAB119CA2FC73549E20F5B0D", "DDE59B97D722156D4D9AFF2BC7559826", "54B9F04E6A09189A", "1BDA122BCE8A8DBAF1877D962B8592DD2D56", "2EC47B2C4954A489AFC7BA4897EDCDAE8CC33B60450599BD02C96382902AEF7F832A"},
		{"A4A4782BCFFD3EC5E7EF6D8C34A56123", "B781FCF2F75FA5A8DE97A9CA48E522EC", "899A175897561D7E", "6CF36720872B8513F6EAB1A8A44438D5EF11", "0DE18FD0FDD91E7AF19F1D8EE8733938B1E8E7F6D2231618102FDB7FE55FF1991700"},
		{"8395FCF1E95BEBD697BD010BC766AAC3", "22E7ADD93CFC6393C57EC0B3C17D6B44", "126735FCC320D25A", "CA40D7446E545FFAED3BD12A740A659FFBBB3CEAB7", "CB8920F87A6C75CFF39627B56E3ED197C552D295A7CFC46AFC253B4652B1AF3795B124AB6E"},
	}
	for i, v := range vectors {
		b, err := aes.NewCipher(unhex(t, v.key))
		if err != nil {
			t.Fatal(err)
		}
		e := newEAX(b)
		msg, want := unhex(t, v.msg), unhex(t, v.ct)
		nonce, header := unhex(t, v.nonce), unhex(t, v.header)
		ct := make([]byte, len(msg))
		tag := e.seal(ct, nonce, msg, header)
		if got := append(ct, tag[:]...); !bytes.Equal(got, want) {
			t.Errorf("vector %d: seal = %X, want %X", i+1, got, want)
		}
		p := make([]byte, len(msg))
		if err := e.open(p, nonce, want[:len(msg)], header, want[len(msg):]); err != nil || !bytes.Equal(p, msg) {
			t.Errorf("vector %d: open = %X, %v", i+1, p, err)
		}
		bad := append([]byte(nil), want...)
		bad[len(bad)-1] ^= 1
		if err := e.open(p, nonce, bad[:len(msg)], header, bad[len(msg):]); err == nil {
			t.Errorf("vector %d: open accepted a bad tag", i+1)
		}
	}
}

// TestLangGraphKAT checks both modes against the known answers of the
// reference (pycryptodome 3.11): key "0123456789abcdef0123456789abcdef",
// nonce 00..0f, plaintext msgpack {"a":1}.
func TestLangGraphKAT(t *testing.T) {
	pt := unhex(t, "81a16101")
	for _, tc := range []struct {
		mode crypto.Mode
		blob string
	}{
		{crypto.ModeEAX, "000102030405060708090a0b0c0d0e0f" + "8ee76d82f558339f0a1b2b3ee26b5ee1" + "a5d8639e"},
		{crypto.ModeGCM, "000102030405060708090a0b0c0d0e0f" + "d346c6089a2457ed498240206c151328" + "6767f3a1"},
	} {
		c, err := NewAES(ring(t, katKey), tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		c.rand = fixedRand
		got, err := c.Encrypt(pt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got) != tc.blob {
			t.Errorf("%v: encrypt = %x, want %s", tc.mode, got, tc.blob)
		}
		// Either configured mode reads both blobs.
		for _, m := range []crypto.Mode{crypto.ModeGCM, crypto.ModeEAX} {
			r, _ := NewAES(ring(t, katKey), m)
			p, id, err := r.DecryptKey(unhex(t, tc.blob), nil)
			if err != nil || !bytes.Equal(p, pt) {
				t.Errorf("%v blob read in %v: %x, %v", tc.mode, m, p, err)
			}
			if id != r.Keyring().Primary().ID() {
				t.Errorf("key id %v", id)
			}
		}
	}
}

func TestAESRoundTripAndRejects(t *testing.T) {
	for _, mode := range []crypto.Mode{crypto.ModeGCM, crypto.ModeEAX} {
		c, err := NewAES(ring(t, katKey), mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 15, 16, 17, 1000} {
			pt := bytes.Repeat([]byte{'x'}, n)
			ct, err := c.Encrypt(pt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ct) != n+32 {
				t.Fatalf("len %d", len(ct))
			}
			got, err := c.Decrypt(ct, nil)
			if err != nil || !bytes.Equal(got, pt) {
				t.Fatalf("%v %d: %v", mode, n, err)
			}
			assertBitFlipsFail(t, c, ct, nil)
		}
		if _, err := c.Encrypt([]byte("x"), []byte("aad")); !errors.Is(err, ErrAAD) {
			t.Errorf("aad accepted: %v", err)
		}
		for _, n := range []int{0, 1, 31} {
			if _, err := c.Decrypt(make([]byte, n), nil); !errors.Is(err, crypto.ErrDecrypt) {
				t.Errorf("short blob %d: %v", n, err)
			}
		}
	}
}

func assertBitFlipsFail(t *testing.T, c Cipher, ct, aad []byte) {
	t.Helper()
	for i := range len(ct) * 8 {
		bad := append([]byte(nil), ct...)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := c.Decrypt(bad, aad); !errors.Is(err, crypto.ErrDecrypt) {
			t.Fatalf("bit %d flipped: err = %v", i, err)
		}
	}
	for n := range len(ct) {
		if _, err := c.Decrypt(ct[:n], aad); !errors.Is(err, crypto.ErrDecrypt) {
			t.Fatalf("truncated to %d: err = %v", n, err)
		}
	}
}

func TestEnvelope(t *testing.T) {
	r := ring(t, katKey)
	e, err := NewEnvelope(r)
	if err != nil {
		t.Fatal(err)
	}
	aadA, aadB := []byte("thread A"), []byte("thread B")
	for _, n := range []int{0, 1, 100} {
		pt := bytes.Repeat([]byte{7}, n)
		ct, err := e.Encrypt(pt, aadA)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct) != n+envelopeOverhead || ct[0] != EnvelopeV1 {
			t.Fatalf("layout: len %d version %d", len(ct), ct[0])
		}
		got, err := e.Decrypt(ct, aadA)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("round trip %d: %v", n, err)
		}
		if _, err := e.Decrypt(ct, aadB); !errors.Is(err, crypto.ErrDecrypt) {
			t.Fatalf("aad B opened aad A: %v", err)
		}
		if _, err := e.Decrypt(ct, nil); !errors.Is(err, crypto.ErrDecrypt) {
			t.Fatalf("nil aad opened aad A: %v", err)
		}
		assertBitFlipsFail(t, e, ct, aadA)
	}
	// Two encryptions of the same plaintext differ (random salt and nonce).
	a, _ := e.Encrypt([]byte("same"), nil)
	b, _ := e.Encrypt([]byte("same"), nil)
	if bytes.Equal(a, b) {
		t.Fatal("deterministic envelope")
	}
}

func TestRotation(t *testing.T) {
	old := ring(t, "old-key-16-bytes")
	oldEnv, _ := NewEnvelope(old)
	oldAES, _ := NewAES(old, crypto.ModeEAX)
	envCT, _ := oldEnv.Encrypt([]byte("secret"), []byte("aad"))
	aesCT, _ := oldAES.Encrypt([]byte("secret"), nil)

	rotated := ring(t, katKey, "old-key-16-bytes")
	env, _ := NewEnvelope(rotated)
	a, _ := NewAES(rotated, crypto.ModeGCM)
	p, id, err := env.DecryptKey(envCT, []byte("aad"))
	if err != nil || string(p) != "secret" || rotated.IsPrimary(id) || id != old.Primary().ID() {
		t.Fatalf("previous key, envelope: %q %v %v", p, id, err)
	}
	p, id, err = a.DecryptKey(aesCT, nil)
	if err != nil || string(p) != "secret" || rotated.IsPrimary(id) {
		t.Fatalf("previous key, aes: %q %v %v", p, id, err)
	}

	unknown := ring(t, katKey)
	env2, _ := NewEnvelope(unknown)
	a2, _ := NewAES(unknown, crypto.ModeGCM)
	if _, err := env2.Decrypt(envCT, []byte("aad")); !errors.Is(err, crypto.ErrDecrypt) {
		t.Fatalf("unknown key, envelope: %v", err)
	}
	if _, err := a2.Decrypt(aesCT, nil); !errors.Is(err, crypto.ErrDecrypt) {
		t.Fatalf("unknown key, aes: %v", err)
	}
}

// TestPythonWrittenBlobs reads blobs written by pycryptodome 3.11.0
// (AES.new(key, mode).encrypt_and_digest, random 16-byte nonce, laid out as
// LangGraph does: nonce ‖ tag ‖ ciphertext). The golden files of this
// package were in turn decrypted by the same pycryptodome with
// decrypt_and_verify, in both modes.
func TestPythonWrittenBlobs(t *testing.T) {
	for _, mode := range []crypto.Mode{crypto.ModeGCM, crypto.ModeEAX} {
		c, _ := NewAES(ring(t, katKey), mode)
		for _, blob := range []string{
			"cfcf7be064a0b7856eb0f78cdf646c370a9f5fc70cd0b38145900df7ccd3060cc659677a", // MODE_EAX
			"83a4bb9f4ed742cf43921f32a953965fef2d647e266758d714adb20f68f727667dcc8d74", // MODE_GCM
		} {
			p, err := c.Decrypt(unhex(t, blob), nil)
			if err != nil || hex.EncodeToString(p) != "81a16101" {
				t.Errorf("%v: %s: %x %v", mode, blob, p, err)
			}
		}
	}
}

// TestEnvelopeKeyDerivation checks the pooled single-block HKDF-Expand
// against crypto/hkdf, for the documented inputs.
func TestEnvelopeKeyDerivation(t *testing.T) {
	k, _ := crypto.ParseKey(katKey)
	ek, err := newEnvKey(k)
	if err != nil {
		t.Fatal(err)
	}
	header := make([]byte, envHeaderSize)
	header[0] = EnvelopeV1
	id := k.ID()
	copy(header[1:], id[:])
	for i := range envSaltSize {
		header[1+crypto.KeyIDSize+i] = byte(i * 7)
	}
	prk, _ := hkdf.Extract(sha256.New, []byte(katKey), []byte("memvault/envelope/v1"))
	info := "memvault/envelope/v1" + string(header[:1+crypto.KeyIDSize+envSaltSize])
	want, _ := hkdf.Expand(sha256.New, prk, info, 32)
	for range 3 { // pooled states are reset between uses
		var got [32]byte
		ek.recordKey(&got, header)
		if !bytes.Equal(got[:], want) {
			t.Fatalf("record key %x, want %x", got, want)
		}
	}
}

// TestEnvelopeRecordCache checks that opening a record from the cache of
// derived record keys checks everything a fresh open does.
func TestEnvelopeRecordCache(t *testing.T) {
	e, err := NewEnvelope(ring(t, katKey))
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("row A")
	ct, err := e.Encrypt([]byte("secret value"), aad)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second open is served by the cache
		if p, err := e.Decrypt(ct, aad); err != nil || string(p) != "secret value" {
			t.Fatalf("open %d: %q, %v", i, p, err)
		}
	}
	if _, err := e.Decrypt(ct, []byte("row B")); !errors.Is(err, crypto.ErrDecrypt) {
		t.Fatalf("cached record under another aad: %v", err)
	}
	assertBitFlipsFail(t, e, ct, aad)
	// A keyring without the key cannot use the cached record key.
	other, err := NewEnvelope(ring(t, "fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Decrypt(ct, aad); !errors.Is(err, crypto.ErrDecrypt) {
		t.Fatalf("other keyring: %v", err)
	}
}

// TestEnvelopeSaltRenewal checks that records share a salt until the
// sealer's budget is spent, that a new salt follows, and that records of
// every salt open, also when goroutines race over a renewal.
func TestEnvelopeSaltRenewal(t *testing.T) {
	e, err := NewEnvelope(ring(t, katKey))
	if err != nil {
		t.Fatal(err)
	}
	salt := func(ct []byte) string { return string(ct[1+crypto.KeyIDSize : 1+crypto.KeyIDSize+envSaltSize]) }
	a, _ := e.Encrypt([]byte("a"), nil)
	b, _ := e.Encrypt([]byte("b"), nil)
	if salt(a) != salt(b) {
		t.Fatal("second record drew a new salt before the budget was spent")
	}
	if bytes.Equal(a[41:envHeaderSize], b[41:envHeaderSize]) {
		t.Fatal("two records under one salt share a nonce")
	}
	if left := e.seal.Load().left.Load(); left != RecordsPerSalt-2 {
		t.Fatalf("budget left %d, want %d", left, RecordsPerSalt-2)
	}
	e.seal.Load().left.Store(0)
	c, _ := e.Encrypt([]byte("c"), nil)
	if salt(c) == salt(b) {
		t.Fatal("spent salt reused")
	}
	// Fresh envelopes (other processes) open every record.
	reader, _ := NewEnvelope(ring(t, katKey))
	for _, ct := range [][]byte{a, b, c} {
		if _, err := reader.Decrypt(ct, nil); err != nil {
			t.Fatal(err)
		}
	}

	// Goroutines sealing while the budget runs out every few records.
	var wg sync.WaitGroup
	var mu sync.Mutex
	salts := map[string]int{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if i%50 == 0 {
					e.seal.Load().left.Store(int64(g))
				}
				pt := []byte(fmt.Sprintf("%d/%d", g, i))
				ct, err := e.Encrypt(pt, pt)
				if err != nil {
					t.Error(err)
					return
				}
				if p, err := reader.Decrypt(ct, pt); err != nil || !bytes.Equal(p, pt) {
					t.Errorf("record %s: %v", pt, err)
					return
				}
				mu.Lock()
				salts[salt(ct)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(salts) < 2 {
		t.Fatalf("%d salts over many renewals", len(salts))
	}
}
