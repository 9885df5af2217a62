package serde

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/aead"

	"github.com/memvault/memvault/crypto"
)

const testKey = "0123456789abcdef0123456789abcdef"

func keyring(t testing.TB, primary string, previous ...string) *crypto.Keyring {
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

func encrypted(t testing.TB, r *crypto.Keyring, opts ...EncryptedOption) *Encrypted {
	t.Helper()
	e, err := NewEncrypted(nil, r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func modes(t testing.TB, r *crypto.Keyring) map[string]*Encrypted {
	return map[string]*Encrypted{
		"envelope": encrypted(t, r),
		"aes-gcm":  encrypted(t, r, WithDangerousLangGraphAES(crypto.ModeGCM)),
		"aes-eax":  encrypted(t, r, WithDangerousLangGraphAES(crypto.ModeEAX)),
	}
}

func TestEncryptedRoundTrip(t *testing.T) {
	r := keyring(t, testKey)
	aad := testAAD("blob", "thread-1", "", "messages", "00000000000000000000000000000001.0.5")
	for name, e := range modes(t, r) {
		for _, v := range []any{nil, []byte("raw"), map[string]any{"a": int64(1)}, sampleOrder().Items} {
			typ, data, err := e.DumpsTypedWith(v, aad)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(typ, "+"+e.CipherName()) {
				t.Fatalf("%s: tag %q", name, typ)
			}
			got, err := e.LoadsTypedWith(typ, data, aad)
			if err != nil {
				t.Fatalf("%s %q: %v", name, typ, err)
			}
			want := roundTrip(t, JSONPlus{}, v)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %#v != %#v", name, got, want)
			}
		}
		// Every mode reads what every other mode wrote, except that the
		// envelope mode refuses unbound "aes" values unless told to.
		for other, o := range modes(t, r) {
			typ, data, _ := o.DumpsTypedWith("x", aad)
			got, err := e.LoadsTypedWith(typ, data, aad)
			if name == "envelope" && other != "envelope" {
				if !errors.Is(err, ErrUnboundRefused) {
					t.Errorf("%s reading %s: %v %v, want ErrUnboundRefused", name, other, got, err)
				}
				dangerous := encrypted(t, r, WithDangerousUnboundAESReads())
				got, err = dangerous.LoadsTypedWith(typ, data, aad)
			}
			if err != nil || got != "x" {
				t.Errorf("%s reading %s: %v %v", name, other, got, err)
			}
		}
	}
	if got := encrypted(t, r).CipherName(); got != aead.EnvelopeName {
		t.Fatalf("default cipher %q", got)
	}
}

func TestEncryptedTamper(t *testing.T) {
	r := keyring(t, testKey)
	aadA := testAAD("blob", "thread-A", "", "messages", "1")
	aadB := testAAD("blob", "thread-B", "", "messages", "1")
	for name, e := range modes(t, r) {
		typ, data, err := e.DumpsTypedWith(map[string]any{"secret": "hunter2"}, aadA)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(data) * 8 {
			bad := append([]byte(nil), data...)
			bad[i/8] ^= 1 << (i % 8)
			if _, err := e.LoadsTypedWith(typ, bad, aadA); err != ErrDecrypt {
				t.Fatalf("%s: bit %d: %v", name, i, err)
			}
		}
		for n := range len(data) {
			if _, err := e.LoadsTypedWith(typ, data[:n], aadA); err != ErrDecrypt {
				t.Fatalf("%s: truncated to %d: %v", name, n, err)
			}
		}
		if _, err := e.LoadsTypedWith(typ, append(data, 0), aadA); err != ErrDecrypt {
			t.Fatalf("%s: extended: %v", name, err)
		}
		if e.CipherName() == aead.EnvelopeName {
			// Moved to another thread.
			if _, err := e.LoadsTypedWith(typ, data, aadB); err != ErrDecrypt {
				t.Fatalf("AAD B opened AAD A: %v", err)
			}
			// Relabelled inner tag.
			if _, err := e.LoadsTypedWith("msgpack+"+aead.EnvelopeName, data, aadA); err != ErrDecrypt {
				t.Fatalf("relabelled: %v", err)
			}
		}
		// Another key.
		other := modes(t, keyring(t, "another-key-0123"))[name]
		if _, err := other.LoadsTypedWith(typ, data, aadA); err != ErrDecrypt {
			t.Fatalf("%s: wrong key: %v", name, err)
		}
	}
}

func TestEncryptedStrict(t *testing.T) {
	r := keyring(t, testKey)
	e := encrypted(t, r)
	for _, typ := range []string{TypeJSON, TypeNull, TypeMsgpack, TypeBytes} {
		if _, err := e.LoadsTyped(typ, []byte(`{}`)); !errors.Is(err, ErrPlaintextRefused) {
			t.Errorf("%s: %v", typ, err)
		}
	}
	// "empty" and "null" carry no authentication: a row relabelled so must
	// not load as nil.
	for _, typ := range []string{TypeEmpty, TypeNull, ""} {
		if v, err := e.LoadsTypedWith(typ, nil, testAAD("blob", "t", "", "c", "1")); v != nil || !errors.Is(err, ErrPlaintextRefused) {
			t.Errorf("%q: %v %v, want ErrPlaintextRefused", typ, v, err)
		}
	}
	if info, err := e.Inspect(TypeEmpty, nil, nil); err != nil || info != (KeyInfo{}) {
		t.Errorf("Inspect(empty) = %v %v", info, err)
	}
	lax := encrypted(t, r, WithDangerousPlaintextReads())
	if v, err := lax.LoadsTyped(TypeJSON, []byte(`{"a":1}`)); err != nil || !reflect.DeepEqual(v, map[string]any{"a": int64(1)}) {
		t.Errorf("plaintext reads: %v %v", v, err)
	}
	if _, err := e.LoadsTyped("json+rot13", []byte("x")); !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), "rot13") {
		t.Errorf("unknown cipher: %v", err)
	}
}

// TestEncryptedPythonKAT reads the blob Python LangGraph writes for {"a":1}
// (reference §4), in both of pycryptodome's modes.
func TestEncryptedPythonKAT(t *testing.T) {
	e := encrypted(t, keyring(t, testKey), WithDangerousLangGraphAES(crypto.ModeGCM))
	for _, blob := range []string{
		"000102030405060708090a0b0c0d0e0f8ee76d82f558339f0a1b2b3ee26b5ee1a5d8639e", // EAX
		"000102030405060708090a0b0c0d0e0fd346c6089a2457ed498240206c1513286767f3a1", // GCM
	} {
		b, _ := hex.DecodeString(blob)
		// Backends pass their associated data; "aes" ignores it.
		v, err := e.LoadsTypedWith("msgpack+aes", b, []byte("aad is not used by aes"))
		if err != nil || !reflect.DeepEqual(v, map[string]any{"a": int64(1)}) {
			t.Errorf("%s: %#v %v", blob, v, err)
		}
	}
}

func TestEncryptedRotation(t *testing.T) {
	aad := testAAD("item", "users.alice", "prefs")
	old := keyring(t, "old-key-16-bytes")
	for name, e := range modes(t, old) {
		typ, data, _ := e.DumpsTypedWith("v", aad)
		rotated := encrypted(t, keyring(t, testKey, "old-key-16-bytes"), WithDangerousUnboundAESReads())
		if v, err := rotated.LoadsTypedWith(typ, data, aad); err != nil || v != "v" {
			t.Fatalf("%s: previous key: %v %v", name, v, err)
		}
		need, err := rotated.NeedsReencrypt(typ, data, aad)
		if err != nil || !need {
			t.Fatalf("%s: NeedsReencrypt = %v, %v", name, need, err)
		}
		info, _ := rotated.Inspect(typ, data, aad)
		if info.Primary || info.KeyID != old.Primary().ID() {
			t.Fatalf("%s: %+v", name, info)
		}
		typ2, data2, _ := rotated.DumpsTypedWith("v", aad)
		if need, err := rotated.NeedsReencrypt(typ2, data2, aad); err != nil || need {
			t.Fatalf("%s: fresh value needs reencrypt: %v %v", name, need, err)
		}
		unknown := encrypted(t, keyring(t, testKey), WithDangerousUnboundAESReads())
		if _, err := unknown.LoadsTypedWith(typ, data, aad); err != ErrDecrypt {
			t.Fatalf("%s: unknown key: %v", name, err)
		}
		if _, err := unknown.NeedsReencrypt(typ, data, aad); err != ErrDecrypt {
			t.Fatalf("%s: NeedsReencrypt unknown key: %v", name, err)
		}
	}
	// An aes value needs rewriting by an envelope writer, even under the
	// primary key.
	r := keyring(t, testKey)
	typ, data, _ := encrypted(t, r, WithDangerousLangGraphAES(crypto.ModeGCM)).DumpsTypedWith("v", nil)
	if need, err := encrypted(t, r, WithDangerousUnboundAESReads()).NeedsReencrypt(typ, data, nil); !need || err != nil {
		t.Fatalf("aes value not flagged for an envelope writer: %v", err)
	}
	lax := encrypted(t, r, WithDangerousPlaintextReads())
	if need, err := lax.NeedsReencrypt(TypeJSON, []byte(`1`), nil); !need || err != nil {
		t.Fatalf("plaintext: %v %v", need, err)
	}
}

func TestEncryptedFromEnv(t *testing.T) {
	t.Setenv(crypto.EnvKey, "")
	t.Setenv(crypto.EnvPreviousKey, "")
	_, err := EncryptedFromEnv(nil)
	if !errors.Is(err, crypto.ErrKeyNotSet) || !strings.HasSuffix(err.Error(), "LANGGRAPH_AES_KEY environment variable is not set.") {
		t.Fatalf("unset: %v", err)
	}
	for _, bad := range []string{"abc", "0123456789abcdef0", "0123456789abcdef0123456789abcdef!"} {
		t.Setenv(crypto.EnvKey, bad)
		_, err := EncryptedFromEnv(nil)
		if !errors.Is(err, crypto.ErrKeySize) || !strings.HasSuffix(err.Error(), "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.") {
			t.Fatalf("%d bytes: %v", len(bad), err)
		}
		if strings.Contains(err.Error(), bad) {
			t.Fatalf("error contains the key: %v", err)
		}
	}
	t.Setenv(crypto.EnvKey, testKey)
	t.Setenv(crypto.EnvPreviousKey, "old-key-16-bytes")
	e, err := EncryptedFromEnv(MsgPack{})
	if err != nil {
		t.Fatal(err)
	}
	typ, data, err := e.DumpsTypedWith(map[string]any{"k": "v"}, []byte("aad"))
	if err != nil || typ != "msgpack+mvgcm" {
		t.Fatalf("%s %v", typ, err)
	}
	if len(e.Keyring().Keys()) != 2 {
		t.Fatal("previous key not loaded")
	}
	// Errors never contain key bytes.
	_, err = e.LoadsTypedWith(typ, data[:10], []byte("aad"))
	if err == nil || strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "old-key") {
		t.Fatalf("%v", err)
	}
}

// TestEncryptedLoadsOwnTheirValues: values loaded from reused buffers keep
// their content when later loads reuse the buffers.
func TestEncryptedLoadsOwnTheirValues(t *testing.T) {
	e := encrypted(t, keyring(t, testKey))
	mk := func(s string) any {
		return map[string]any{"s": s, "list": []any{s + "1", s + "2"}, "nested": map[string]any{s: s}, "n": int64(len(s))}
	}
	first := mk("hello world, a string long enough to matter")
	typ, ct, err := e.DumpsTypedWith(first, []byte("row"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.LoadsTypedWith(typ, ct, []byte("row"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		other := mk(fmt.Sprintf("%044d", i))
		typ2, ct2, err := e.DumpsTypedWith(other, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := e.LoadsTypedWith(typ2, ct2, nil); err != nil || !reflect.DeepEqual(v, other) {
			t.Fatalf("load %d: %v, %v", i, v, err)
		}
	}
	if !reflect.DeepEqual(got, first) {
		t.Fatalf("an earlier value changed: %#v", got)
	}
	// And the reused-buffer path fails as the general one does.
	if _, err := e.LoadsTypedWith(typ, ct, []byte("other row")); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("other aad: %v", err)
	}
}

// TestAppendAAD: the Append forms append exactly what the others return.
// TestEnvelopeRefusesUnboundAES: an "aes" value decrypts under any
// associated data, so in envelope mode it is refused wherever it is found
// (ErrUnboundRefused, not ErrDecrypt: nothing failed to decrypt), also by
// Inspect and NeedsReencrypt, which re-encryption relies on; LangGraph mode
// and the dangerous switch read it.
func TestEnvelopeRefusesUnboundAES(t *testing.T) {
	r := keyring(t, testKey)
	lg := encrypted(t, r, WithDangerousLangGraphAES(crypto.ModeGCM))
	typ, data, err := lg.DumpsTypedWith(map[string]any{"secret": "alice's memory"}, testAAD("item", "users.alice", "k"))
	if err != nil {
		t.Fatal(err)
	}
	env := encrypted(t, r)
	moved := testAAD("item", "users.mallory", "k") // the row copied under another user
	if _, err := env.LoadsTypedWith(typ, data, moved); !errors.Is(err, ErrUnboundRefused) || errors.Is(err, ErrDecrypt) {
		t.Fatalf("envelope mode loaded a moved aes row: %v", err)
	}
	if _, err := env.NeedsReencrypt(typ, data, moved); !errors.Is(err, ErrUnboundRefused) {
		t.Fatalf("NeedsReencrypt = %v, want ErrUnboundRefused", err)
	}
	plain := encrypted(t, r, WithDangerousPlaintextReads())
	if _, err := plain.LoadsTypedWith(typ, data, moved); !errors.Is(err, ErrUnboundRefused) {
		t.Fatalf("plaintext reads must not let aes through: %v", err)
	}
	for name, e := range map[string]*Encrypted{"langgraph": lg, "dangerous": encrypted(t, r, WithDangerousUnboundAESReads())} {
		if v, err := e.LoadsTypedWith(typ, data, moved); err != nil || v.(map[string]any)["secret"] != "alice's memory" {
			t.Fatalf("%s: %v %v", name, v, err)
		}
	}
}

// TestOneDecryptError: every decryption failure matches both serde's and
// crypto's sentinel, so callers test for one error.
func TestOneDecryptError(t *testing.T) {
	e := encrypted(t, keyring(t, "0123456789abcdef0123456789abcdef"))
	typ, data, err := e.DumpsTypedWith("secret", testAAD("blob", "a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.LoadsTypedWith(typ, data, testAAD("blob", "b"))
	if !errors.Is(err, ErrDecrypt) || !errors.Is(err, crypto.ErrDecrypt) {
		t.Fatalf("moved value: %v, want serde.ErrDecrypt wrapping crypto.ErrDecrypt", err)
	}
	// One layer's name in the message, not "serde: crypto: ...": users match
	// on the error, and the text stays what the README shows.
	if got := err.Error(); strings.Count(got, "decryption failed") != 1 || strings.Contains(got, "crypto:") {
		t.Fatalf("message %q, want serde's one generic decryption message", got)
	}
}
