package items

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/store"
)

// Put is a put (or, with a nil Value, a delete) ready to store.
type Put struct {
	Namespace store.Namespace // the caller's, copied
	Prefix    string          // Namespace.String(), as stored
	Key       string
	Op        int            // index of the key's first op in its batch (PlanBatch)
	Value     map[string]any // canonical copy; nil deletes
	TTL       time.Duration  // 0: no expiry
	// Reindex: the store has an index, so the item's vectors are replaced
	// by Vectors (none when Texts is empty, as WithoutIndex asks).
	Reindex bool
	Texts   []indexing.FieldText
	Vectors [][]float32 // one per text, each its own slice; set by Embed
}

// Prepare checks op and prepares its write for a store with ttl and cfg (its index)
// (nil without them).
//
// A put (non-nil Value) stores its namespace and key, which must fit
// store.MaxIDBytes; a delete only finds them, and takes any length, so
// that an item an earlier version stored under a longer namespace or key
// can still be deleted.
func Prepare(op store.PutOp, ttl *store.TTLConfig, cfg *store.IndexConfig) (*Put, error) {
	validNS, validKey := op.Namespace.ValidateStored, store.ValidateStoredKey
	if op.Value == nil {
		validNS, validKey = op.Namespace.Validate, store.ValidateKey
	}
	if err := validNS(); err != nil {
		return nil, err
	}
	if err := validKey(op.Key); err != nil {
		return nil, err
	}
	p := &Put{Namespace: op.Namespace.Clone(), Prefix: op.Namespace.String(), Key: op.Key}
	if op.Value == nil {
		return p, nil
	}
	v, err := CloneValue(op.Value)
	if err != nil {
		return nil, err
	}
	p.Value = v
	if p.TTL, err = ResolveTTL(ttl, op.Options.TTL); err != nil {
		return nil, err
	}
	fields := op.Options.Index
	if cfg == nil {
		if len(fields) > 0 {
			return nil, fmt.Errorf("%w: WithIndex%q", store.ErrNoIndex, fields)
		}
		return p, nil
	}
	p.Reindex = true
	if fields == nil {
		fields = cfg.Fields
	}
	if p.Texts, err = indexing.ExtractTexts(v, fields); err != nil {
		return nil, err
	}
	return p, nil
}

// embed computes the vectors of puts in one embedder call, each moved into
// its item's space (Config.Spaces), and the vector of every query in
// queries (whose keys are the queries), in the shared space: a search
// moves it into the spaces it meets (spaces.Query).
func (c Config) embed(ctx context.Context, puts []*Put, queries map[string][]float32) error {
	cfg := c.Index
	if cfg == nil {
		return nil
	}
	var texts []string
	for _, p := range puts {
		for _, t := range p.Texts {
			texts = append(texts, t.Text)
		}
	}
	vecs, err := indexing.EmbedDocuments(ctx, cfg.Embedder, cfg.Dims, texts)
	if err != nil {
		return err
	}
	for _, p := range puts {
		p.Vectors = make([][]float32, len(p.Texts))
		for i := range p.Texts {
			p.Vectors[i] = slices.Clone(vecs[0]) // kept by vector caches
			vecs = vecs[1:]
		}
		if err := c.Spaces.Rotate(ctx, p.Prefix, p.Vectors); err != nil {
			return err
		}
	}
	for q := range queries {
		v, err := indexing.EmbedQuery(ctx, cfg.Embedder, cfg.Dims, q)
		if err != nil {
			return err
		}
		queries[q] = v
	}
	return nil
}
