package items

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/indexing"
)

// StoredVector is one stored vector's key with its item's value as stored.
type StoredVector struct {
	Prefix, Key, Field string
	Raw                []byte
}

// VectorUpdate is one re-embedded vector.
type VectorUpdate struct {
	Prefix, Key, Field string
	Vector             []float32
}

// Vectors is what a driver lends Reembed: its vector rows, read in
// (prefix, key, field) order, and the writes of a re-embedding.
type Vectors struct {
	// Count is the number of stored vectors (for progress).
	Count func(ctx context.Context) (int64, error)
	// Page returns up to limit vectors after the given key, with their
	// items' stored values.
	Page func(ctx context.Context, after [3]string, limit int) ([]StoredVector, error)
	// Decode turns a stored value into the item's value (decrypting it).
	Decode func(ctx context.Context, prefix, key string, raw []byte) (map[string]any, error)
	// Write stores a page of new vectors in one transaction.
	Write func(ctx context.Context, updates []VectorUpdate) error
	// Record makes name the store's recorded embedder.
	Record func(ctx context.Context, name string) error
}

// Reembed implements store.Reembedder over a driver's vectors: every
// stored vector is recomputed with to from the text its item's value yields
// for the vector's field, a page at a time (one embedder call each), and
// moved into its item's space (each data subject's own, also when the
// store was opened with store.IndexConfig.DangerousSharedSubjectVectors);
// then to, in those spaces, is recorded as the store's embedder
// (Config.VectorName). Vectors whose text the value no
// longer yields are left as they are, counted in the error, and the record
// is not changed.
func (b *Base) Reembed(ctx context.Context, v Vectors, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	if err := b.Check(ctx); err != nil {
		return 0, err
	}
	c := b.Config
	if c.Index == nil {
		return 0, fmt.Errorf("%s: re-embed: %w", c.Driver, store.ErrNoIndex)
	}
	if err := indexing.CheckReembedTarget(to, c.Index.Dims); err != nil {
		return 0, fmt.Errorf("%s: %w", c.Driver, err)
	}
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 256
	}
	fail := func(err error) error { return fmt.Errorf("%s: re-embed: %w", c.Driver, err) }
	total, err := v.Count(ctx)
	if err != nil {
		return 0, fail(err)
	}
	var done, lost int64
	var after [3]string
	for {
		page, err := v.Page(ctx, after, batch)
		if err != nil {
			return done, fail(err)
		}
		if len(page) == 0 {
			break
		}
		after = [3]string{page[len(page)-1].Prefix, page[len(page)-1].Key, page[len(page)-1].Field}
		updates := make([]VectorUpdate, 0, len(page))
		texts := make([]string, 0, len(page))
		for _, sv := range page {
			value, err := v.Decode(ctx, sv.Prefix, sv.Key, sv.Raw)
			if err != nil {
				return done, fmt.Errorf("%s: re-embed %s/%s: %w", c.Driver, sv.Prefix, sv.Key, err)
			}
			t, ok := indexing.ReembedTexts(value, c.Index.Fields, sv.Field)
			if !ok {
				lost++
				continue
			}
			updates = append(updates, VectorUpdate{Prefix: sv.Prefix, Key: sv.Key, Field: sv.Field})
			texts = append(texts, t)
		}
		vecs, err := indexing.EmbedDocuments(ctx, to, c.Index.Dims, texts)
		if err != nil {
			return done, fail(err)
		}
		for i := range updates {
			if err := c.reembedTo.Rotate(ctx, updates[i].Prefix, vecs[i:i+1]); err != nil {
				return done, fail(err)
			}
			updates[i].Vector = vecs[i]
		}
		if err := v.Write(ctx, updates); err != nil {
			return done, fail(err)
		}
		done += int64(len(page))
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	if lost > 0 {
		return done, fmt.Errorf("%s: re-embed: %d vectors' texts are no longer in their values (re-put those items); the embedder record is unchanged", c.Driver, lost)
	}
	if err := v.Record(ctx, to.Name()+c.reembedTo.Suffix()); err != nil {
		return done, fmt.Errorf("%s: re-embed: record embedder: %w", c.Driver, err)
	}
	return done, nil
}
