package vault

import (
	"fmt"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// vectorEmbedder builds the store's embedder for the vectors recorded as
// made by recorded ("" when the store has none yet): the public embedder
// when encryption is off; else the protected one under the primary key, or
// under the previous key that made the stored vectors (after a rotation,
// until they are re-embedded), or — for vectors made before protection
// existed — the public one, so that an existing store keeps working.
// spaces is what the store adds to the embedder's name when data subjects'
// vectors have spaces of their own ("+subjects:<prefix>", else ""): a
// store whose vectors were recorded without it holds subjects' vectors in
// the shared space, made before subjects had spaces, and is kept so
// (shared) until re-embedded. The warning says what to do in those cases.
func vectorEmbedder(c config.Config, public embeddings.Embedder, ring *crypto.Keyring, recorded, spaces string) (e embeddings.Embedder, shared bool, warning string, err error) {
	if public == nil || ring == nil {
		return public, false, "", nil
	}
	protect := func(k *crypto.Key) (embeddings.Embedder, error) {
		p, err := config.ProtectedEmbedder(public, k)
		if err != nil {
			return nil, err
		}
		return c.CachedEmbedder(p)
	}
	const shared1 = "data subjects' vectors are in the shared space, made before subjects had vector spaces of their own: a copy of the database and the master key still give a forgotten subject's words away"
	e, err = protect(ring.Primary())
	if err != nil || recorded == "" || recorded == e.Name()+spaces {
		return e, false, "", err
	}
	if spaces != "" && recorded == e.Name() {
		return e, true, "the store's " + shared1 + "; re-embed them (memvault store reembed, or keys reencrypt)", nil
	}
	for _, k := range ring.Keys()[1:] {
		old, err := config.ProtectedEmbedder(public, k)
		if err != nil {
			continue
		}
		if recorded == old.Name()+spaces || (spaces != "" && recorded == old.Name()) {
			shared = recorded == old.Name() && spaces != ""
			warning = fmt.Sprintf("the store's vectors are keyed by the previous key %s: re-embed them under the primary key (memvault store reembed) before retiring it", k.ID())
			if shared {
				warning += "; " + shared1
			}
			e, err := protect(k)
			return e, shared, warning, err
		}
	}
	if recorded == public.Name() {
		e, err := c.CachedEmbedder(public)
		return e, spaces != "", fmt.Sprintf("the store's vectors were made by the public embedder %s, not keyed or sealed: whoever reads the database can match them against a dictionary and recover the words of encrypted memories; re-embed them (memvault store reembed)", public.Name()), err
	}
	return e, false, "", nil // let the store refuse the mismatch
}

// indexConfig is the store's index on e; shared keeps data subjects'
// vectors in the shared space (see vectorEmbedder).
func indexConfig(c config.Config, e embeddings.Embedder, shared bool) *store.IndexConfig {
	if e == nil {
		return nil
	}
	fields := c.IndexFields
	if len(fields) == 0 {
		fields = []string{"$"}
	}
	dist := c.Distance
	if dist == "" {
		dist = store.Cosine
	}
	return &store.IndexConfig{Dims: e.Dims(), Embedder: e, Fields: fields, Distance: dist, DangerousSharedSubjectVectors: shared}
}

// ttlConfig is the store's TTL configuration: a copy of c.TTL, so that the
// store never shares it with the caller's Config.
func ttlConfig(c config.Config) *store.TTLConfig {
	t := c.TTL
	return &t
}
