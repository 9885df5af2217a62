package crypto

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Environment variables read by KeyringFromEnv.
const (
	EnvKey         = "LANGGRAPH_AES_KEY"
	EnvPreviousKey = "LANGGRAPH_AES_KEY_PREVIOUS"
)

// Keyring is one primary key, used to encrypt, and any number of previous
// keys, used only to decrypt. It is immutable and safe for concurrent use.
type Keyring struct {
	keys []*Key // keys[0] is the primary
	byID map[KeyID]*Key
}

// NewKeyring returns a keyring encrypting with primary and decrypting with
// primary and previous. Duplicate keys are dropped.
func NewKeyring(primary *Key, previous ...*Key) (*Keyring, error) {
	if primary == nil {
		return nil, fmt.Errorf("crypto: keyring needs a primary key")
	}
	r := &Keyring{byID: make(map[KeyID]*Key, 1+len(previous))}
	for i, k := range append([]*Key{primary}, previous...) {
		if k == nil {
			return nil, fmt.Errorf("crypto: previous key %d is nil", i)
		}
		if _, dup := r.byID[k.id]; dup {
			continue
		}
		r.byID[k.id] = k
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// KeyringFromEnv builds a keyring from LANGGRAPH_AES_KEY (primary) and
// LANGGRAPH_AES_KEY_PREVIOUS (comma separated, decryption only), each value
// parsed by ParseKey. An unset or empty LANGGRAPH_AES_KEY is ErrKeyNotSet.
func KeyringFromEnv() (*Keyring, error) { return KeyringFromLookup(os.LookupEnv) }

// KeyringFromLookup is KeyringFromEnv reading variables through lookup.
func KeyringFromLookup(lookup func(string) (string, bool)) (*Keyring, error) {
	v, ok := lookup(EnvKey)
	if !ok || v == "" {
		return nil, fmt.Errorf("crypto: %w", ErrKeyNotSet)
	}
	primary, err := parseEnvKey(EnvKey, v)
	if err != nil {
		return nil, fmt.Errorf("crypto: %s: %w", EnvKey, err)
	}
	var prev []*Key
	if pv, _ := lookup(EnvPreviousKey); pv != "" {
		for i, s := range strings.Split(pv, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			k, err := parseEnvKey(EnvPreviousKey, s)
			if err != nil {
				return nil, fmt.Errorf("crypto: %s entry %d: %w", EnvPreviousKey, i+1, err)
			}
			prev = append(prev, k)
		}
	}
	return NewKeyring(primary, prev...)
}

// parseEnvKey parses one key of either variable by the same rule, so a key
// moved from LANGGRAPH_AES_KEY to LANGGRAPH_AES_KEY_PREVIOUS stays the same
// key: white space around an encoded key ("base64:…", "hex:…") is not part
// of it and is ignored; a raw key is its bytes exactly, as LangGraph reads
// it, and one that starts or ends with white space is refused
// (ErrKeyWhitespace) rather than trimmed into another key.
//
// A key of the wrong size is reported under name, the variable it came
// from, with a hint when a raw key is the base64 or hex of a key of a
// valid size.
func parseEnvKey(name, s string) (*Key, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "base64:") || strings.HasPrefix(t, "hex:") {
		k, err := parseKey(t)
		var se *keySizeError
		if errors.As(err, &se) {
			se.name = name
		}
		return k, err
	}
	if t != s {
		return nil, ErrKeyWhitespace
	}
	k, err := parseKey(s)
	var se *keySizeError
	if errors.As(err, &se) {
		se.name, se.hint = name, encodedHint(s)
	}
	return k, err
}

// Primary returns the key used to encrypt.
func (r *Keyring) Primary() *Key { return r.keys[0] }

// Keys returns all keys, primary first.
func (r *Keyring) Keys() []*Key { return append([]*Key(nil), r.keys...) }

// Lookup returns the key with id.
func (r *Keyring) Lookup(id KeyID) (*Key, bool) {
	k, ok := r.byID[id]
	return k, ok
}

// IsPrimary reports whether id is the primary key's id.
func (r *Keyring) IsPrimary(id KeyID) bool { return r.keys[0].id == id }
