package crypto

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

const katKey = "0123456789abcdef0123456789abcdef"

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestKeyringFromEnv(t *testing.T) {
	_, err := KeyringFromLookup(env(nil))
	if !errors.Is(err, ErrKeyNotSet) || !strings.Contains(err.Error(), "LANGGRAPH_AES_KEY environment variable is not set.") {
		t.Fatalf("unset: %v", err)
	}
	secrets := []string{"short-key", "0123456789abcdef0123", "0123456789abcdef0123456789abcdef0", "hex:00112233", "base64:c2VjcmV0LXNlY3JldA"}
	for _, s := range secrets {
		_, err := KeyringFromLookup(env(map[string]string{EnvKey: s}))
		if !errors.Is(err, ErrKeySize) || !strings.Contains(err.Error(), "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.") {
			t.Fatalf("%q: %v", s, err)
		}
		assertNoSecret(t, err, s)
	}
	for _, s := range []string{"hex:zz00112233445566778899aabbccddeeff", "base64:!!!!"} {
		_, err := KeyringFromLookup(env(map[string]string{EnvKey: s}))
		if !errors.Is(err, ErrKeyEncoding) {
			t.Fatalf("%q: %v", s, err)
		}
		assertNoSecret(t, err, s)
	}
	_, err = KeyringFromLookup(env(map[string]string{EnvKey: katKey, EnvPreviousKey: "good-key-16bytes,bad-secret"}))
	if !errors.Is(err, ErrKeySize) || !strings.Contains(err.Error(), "entry 2") {
		t.Fatalf("previous: %v", err)
	}
	assertNoSecret(t, err, "bad-secret")
	// The size error of a previous key names LANGGRAPH_AES_KEY_PREVIOUS
	// only (it ended with LangGraph's "LANGGRAPH_AES_KEY must be…").
	if strings.Contains(strings.ReplaceAll(err.Error(), EnvPreviousKey, ""), EnvKey) {
		t.Fatalf("previous key's error names %s: %v", EnvKey, err)
	}
	// A 32-byte key in base64 without its prefix: a hint, no key bytes.
	b64 := "q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k="
	for _, name := range []string{EnvKey, EnvPreviousKey} {
		vars := map[string]string{EnvKey: katKey, name: b64}
		_, err := KeyringFromLookup(env(vars))
		if !errors.Is(err, ErrKeySize) || !strings.Contains(err.Error(), `base64 of a 32-byte key: write it as "base64:"`) {
			t.Fatalf("%s of base64 without prefix: %v", name, err)
		}
		assertNoSecret(t, err, b64)
	}

	r, err := KeyringFromLookup(env(map[string]string{
		EnvKey:         "hex:000102030405060708090a0b0c0d0e0f",
		EnvPreviousKey: katKey + ", base64:AAECAwQFBgcICQoLDA0ODxAREhMUFRYX\n, ",
	}))
	if err != nil {
		t.Fatal(err)
	}
	keys := r.Keys()
	if len(keys) != 3 || keys[0].Len() != 16 || keys[1].Len() != 32 || keys[2].Len() != 24 {
		t.Fatalf("keys %v", keys)
	}
	raw, _ := NewKey(unhex(t, "000102030405060708090a0b0c0d0e0f"))
	if keys[0].ID() != raw.ID() {
		t.Fatal("hex key differs from raw bytes")
	}
	// Raw keys are their UTF-8 bytes, as in LangGraph.
	utf, err := ParseKey("ключ-ключ") // 9 runes, 17 bytes
	if err == nil || utf != nil {
		t.Fatal("17-byte key accepted")
	}
	if k, err := ParseKey("ключключ"); err != nil || k.Len() != 16 {
		t.Fatalf("utf-8 key: %v", err)
	}
}

func assertNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, part := range []string{secret, strings.TrimPrefix(strings.TrimPrefix(secret, "hex:"), "base64:")} {
		if len(part) >= 4 && strings.Contains(err.Error(), part) {
			t.Fatalf("error %q contains key material %q", err, part)
		}
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	k, _ := ParseKey(katKey)
	for _, s := range []string{k.String(), k.GoString(), fmtAll(k)} {
		if strings.Contains(s, katKey) || strings.Contains(s, hex.EncodeToString([]byte(katKey))) {
			t.Fatalf("key printed: %s", s)
		}
	}
	if !strings.HasPrefix(k.String(), "key:") || len(k.ID().String()) != 16 {
		t.Fatalf("id %s", k)
	}
}

// TestKeyErrorsNamePackageOnce: key errors name the package once, however
// deep the key was parsed.
func TestKeyErrorsNamePackageOnce(t *testing.T) {
	_, err1 := KeyringFromLookup(env(map[string]string{EnvKey: "short"}))
	_, err2 := KeyringFromLookup(env(map[string]string{EnvKey: katKey, EnvPreviousKey: "hex:zz"}))
	_, err3 := ParseKey("base64:!!")
	_, err4 := NewKey([]byte("x"))
	for _, err := range []error{err1, err2, err3, err4} {
		if err == nil || strings.Count(err.Error(), "crypto:") != 1 || !strings.HasPrefix(err.Error(), "crypto: ") {
			t.Errorf("%v", err)
		}
	}
	if !errors.Is(err2, ErrKeyEncoding) || !errors.Is(err1, ErrKeySize) {
		t.Errorf("sentinels lost: %v, %v", err1, err2)
	}
}

// TestKeyWhitespaceSameInBothVariables: a raw key with a trailing newline
// (from echo or a file) is refused with ErrKeyWhitespace as the primary key
// and as a previous key alike, never trimmed into another key in one of
// them; the error names the variable and never holds key bytes. Encoded
// keys ignore surrounding white space in both.
func TestKeyWhitespaceSameInBothVariables(t *testing.T) {
	for _, raw := range []string{katKey + "\n", katKey[:31] + "\n", katKey + "\r\n", " " + katKey, katKey + " "} {
		_, errPrimary := KeyringFromLookup(env(map[string]string{EnvKey: raw}))
		_, errPrev := KeyringFromLookup(env(map[string]string{EnvKey: "hex:000102030405060708090a0b0c0d0e0f", EnvPreviousKey: raw}))
		for name, err := range map[string]error{EnvKey: errPrimary, EnvPreviousKey: errPrev} {
			if !errors.Is(err, ErrKeyWhitespace) {
				t.Errorf("%s=%q: %v, want ErrKeyWhitespace", name, raw, err)
				continue
			}
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, name)
			}
			assertNoSecret(t, err, strings.TrimSpace(raw))
		}
	}
	enc := "hex:" + hex.EncodeToString([]byte(katKey))
	a, err := KeyringFromLookup(env(map[string]string{EnvKey: enc + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := KeyringFromLookup(env(map[string]string{EnvKey: "hex:000102030405060708090a0b0c0d0e0f", EnvPreviousKey: "\n" + enc + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.Primary().ID() != b.Keys()[1].ID() {
		t.Fatal("one encoded key read as two keys")
	}
}
