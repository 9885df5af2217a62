package config

import (
	"strconv"
	"strings"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/embeddings/openai"
	"github.com/memvault/memvault/serde"
)

// Backend names.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Keyring parses the configured keys exactly as LangGraph reads
// LANGGRAPH_AES_KEY (raw characters, 16/24/32 bytes, LangGraph's error
// texts), plus memvault's "base64:" and "hex:" forms. It returns nil, nil
// when no key is set.
func (c Config) Keyring() (*crypto.Keyring, error) {
	if c.Keys.Primary == "" {
		if len(c.Keys.Previous) > 0 {
			return nil, missingf("config: LANGGRAPH_AES_KEY_PREVIOUS is set but LANGGRAPH_AES_KEY is not")
		}
		return nil, nil
	}
	prev := strings.Join(c.Keys.Previous, ",")
	return crypto.KeyringFromLookup(func(name string) (string, bool) {
		switch name {
		case "LANGGRAPH_AES_KEY":
			return c.Keys.Primary, true
		case "LANGGRAPH_AES_KEY_PREVIOUS":
			return prev, prev != ""
		}
		return "", false
	})
}

// Serializer returns the value serializer the configuration asks for:
// JsonPlus, or JsonPlus inside an Encrypted serializer (memvault's
// envelope, or LangGraph's "aes" format written with AES-GCM).
func (c Config) Serializer() (serde.Serializer, error) {
	s, _, err := c.SerializerKeyring()
	return s, err
}

// SerializerKeyring is Serializer with the keyring it seals under (nil
// when encryption is off).
func (c Config) SerializerKeyring() (serde.Serializer, *crypto.Keyring, error) {
	mode := c.EffectiveEncryption()
	if mode == EncryptionOff {
		return serde.JSONPlus{}, nil, nil
	}
	ring, err := c.Keyring()
	if err != nil {
		return nil, nil, err
	}
	if ring == nil {
		return nil, nil, missingf("config: MEMVAULT_ENCRYPTION=%s needs LANGGRAPH_AES_KEY", mode)
	}
	opts := c.readOptions()
	if mode == EncryptionLangGraph {
		opts = append(opts, serde.WithDangerousLangGraphAES(crypto.ModeGCM))
	}
	enc, err := serde.NewEncrypted(serde.JSONPlus{}, ring, opts...)
	if err != nil {
		return nil, nil, err
	}
	return enc, ring, nil
}

// readOptions are the serializer options for what encrypted serializers
// accept when reading.
func (c Config) readOptions() []serde.EncryptedOption {
	var opts []serde.EncryptedOption
	if c.DangerousAllowPlaintext {
		opts = append(opts, serde.WithDangerousPlaintextReads())
	}
	if c.DangerouslyAcceptUnboundAES {
		opts = append(opts, serde.WithDangerousUnboundAESReads())
	}
	return opts
}

// StoreSerializer is the store's serializer under ring (see
// vault.Handle.StoreSerde): nil without a keyring, else memvault's envelope
// in every mode — also LangGraph mode, since Python's store never reads
// encrypted values and a store value must never be written unbound to its
// namespace and key.
func (c Config) StoreSerializer(ring *crypto.Keyring) (serde.Serializer, error) {
	if ring == nil {
		return nil, nil
	}
	return serde.NewEncrypted(serde.JSONPlus{}, ring, c.readOptions()...)
}

// Embedder returns the configured embedder wrapped in an LRU cache, or nil
// for "none". It is the public model: vault.Open protects it with the primary key
// when encryption is on (see ProtectedEmbedder).
func (c Config) Embedder() (embeddings.Embedder, error) {
	e, err := c.PublicEmbedder()
	if err != nil || e == nil {
		return e, err
	}
	return c.CachedEmbedder(e)
}

// PublicEmbedder returns the configured model itself (nil for "none"):
// without the cache of Embedder and without the protection vault.Open adds when
// encryption is on.
func (c Config) PublicEmbedder() (embeddings.Embedder, error) {
	provider, args, err := parseEmbeddings(c.Embeddings)
	if err != nil {
		return nil, err
	}
	switch provider {
	case "hash":
		n, _ := strconv.Atoi(args[0])
		return embeddings.NewUnkeyedHashing(n), nil
	case "openai":
		o := openai.Options{Model: args[0], APIKey: c.OpenAIAPIKey, BaseURL: c.OpenAIBaseURL}
		if len(args) == 2 {
			o.Dimensions, _ = strconv.Atoi(args[1])
		}
		oe, err := openai.New(o)
		if err != nil {
			return nil, invalidf("config: MEMVAULT_EMBEDDINGS=%q: %w", c.Embeddings, err)
		}
		return oe, nil
	}
	return nil, nil // "none"
}

// CachedEmbedder wraps e in the configured LRU cache of embeddings
// (EmbeddingCacheSize; e itself when that is not positive).
func (c Config) CachedEmbedder(e embeddings.Embedder) (embeddings.Embedder, error) {
	if c.EmbeddingCacheSize <= 0 {
		return e, nil
	}
	return embeddings.NewCached(e, c.EmbeddingCacheSize)
}

// Purposes of the subkeys the embedders derive from a master key.
const (
	hashingKeyPurpose = "memvault embeddings: keyed hashing v1"
	sealKeyPurpose    = "memvault embeddings: vector sealing v1"
)

// ProtectedEmbedder returns what the store's vectors are made with when
// encryption is on: the offline hashing embedder keyed by a secret derived
// from k, or any other embedder with its vectors sealed by a rotation
// derived from k (see embeddings.NewKeyedHashing, embeddings.NewSealed).
// Either way the stored vectors can no longer be compared with what the
// public model computes for candidate texts.
func ProtectedEmbedder(public embeddings.Embedder, k *crypto.Key) (embeddings.Embedder, error) {
	if h, ok := public.(*embeddings.Hashing); ok && !h.Keyed() {
		secret, err := k.DangerousDeriveSubkey(hashingKeyPurpose, embeddings.HashingKeySize)
		if err != nil {
			return nil, err
		}
		return embeddings.NewKeyedHashing(h.Dims(), secret, k.ID().String())
	}
	secret, err := k.DangerousDeriveSubkey(sealKeyPurpose, embeddings.SealKeySize)
	if err != nil {
		return nil, err
	}
	return embeddings.NewSealed(public, secret, k.ID().String())
}

// KeyInfo describes one configured key without revealing it.
type KeyInfo struct {
	Role  string `json:"role"`
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
}

// KeysReport is what `memvault keys check` prints.
type KeysReport struct {
	Mode EncryptionMode `json:"mode"`
	Keys []KeyInfo      `json:"keys"`
	// DangerousAllowPlaintext is Config.DangerousAllowPlaintext.
	DangerousAllowPlaintext bool `json:"dangerous_allow_plaintext"`
}

// DescribeKeys parses the configured keys (failing as vault.Open would) and
// reports the mode, key ids and sizes, never key bytes.
func DescribeKeys(c Config) (KeysReport, error) {
	r := KeysReport{Mode: c.EffectiveEncryption(), Keys: []KeyInfo{}, DangerousAllowPlaintext: c.DangerousAllowPlaintext}
	ring, err := c.Keyring()
	if err != nil {
		return r, err
	}
	if ring == nil {
		return r, nil
	}
	for i, k := range ring.Keys() {
		role := "previous"
		if i == 0 {
			role = "primary"
		}
		r.Keys = append(r.Keys, KeyInfo{Role: role, ID: k.ID().String(), Bytes: k.Len()})
	}
	return r, nil
}
