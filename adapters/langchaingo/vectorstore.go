package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/google/uuid"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/memvault/memvault/store"
)

// contentKey is the value field that holds a document's text (the field
// the store embeds).
const contentKey = "page_content"

// VectorOptions configures a VectorStore. The zero value is usable.
type VectorOptions struct {
	// Namespace holds the documents; nil means {"langchaingo", "docs"}.
	// Documents go one label under it: the vectorstores.WithNameSpace
	// option's, or "default".
	Namespace store.Namespace
}

// VectorStore is a LangChainGo vectorstores.VectorStore over a memvault
// store with a semantic index: documents are store items (their metadata
// the item's fields, their text in "page_content", which is embedded), and
// a similarity search is the store's Search. It is safe for concurrent use.
type VectorStore struct {
	st store.Store
	ns store.Namespace
}

var _ vectorstores.VectorStore = (*VectorStore)(nil)

// NewVectorStore returns a vector store on st.
func NewVectorStore(st store.Store, opts VectorOptions) (*VectorStore, error) {
	ns := opts.Namespace
	if ns == nil {
		ns = store.Namespace{"langchaingo", "docs"}
	}
	if err := ns.Validate(); err != nil {
		return nil, fmt.Errorf("langchaingo: %w", err)
	}
	return &VectorStore{st: st, ns: ns}, nil
}

// namespace applies the options that memvault supports and refuses the
// others.
func (v *VectorStore) namespace(opts []vectorstores.Option) (store.Namespace, vectorstores.Options, error) {
	var o vectorstores.Options
	for _, opt := range opts {
		opt(&o)
	}
	if o.Embedder != nil {
		return nil, o, errors.New("langchaingo: WithEmbedder: memvault embeds with the store's embedder (store.IndexConfig)")
	}
	// Every document sits one label below the base, "default" without
	// WithNameSpace: a search covers a namespace and what is under it, so
	// the default documents must not be above the named ones.
	ns := append(store.Namespace(nil), v.ns...)
	if o.NameSpace != "" {
		ns = append(ns, o.NameSpace)
	} else {
		ns = append(ns, "default")
	}
	if err := ns.Validate(); err != nil {
		return nil, o, fmt.Errorf("langchaingo: namespace: %w", err)
	}
	return ns, o, nil
}

// AddDocuments implements vectorstores.VectorStore: the documents are put
// in one batch (one embedder call) under new ids, which it returns in
// order; those a deduplicater rejects are skipped.
func (v *VectorStore) AddDocuments(ctx context.Context, docs []schema.Document, opts ...vectorstores.Option) ([]string, error) {
	ns, o, err := v.namespace(opts)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	var ids []string
	for _, d := range docs {
		if o.Deduplicater != nil && o.Deduplicater(ctx, d) {
			continue
		}
		if _, clash := d.Metadata[contentKey]; clash {
			return nil, fmt.Errorf("langchaingo: metadata key %q is reserved for the document's text", contentKey)
		}
		value := make(map[string]any, len(d.Metadata)+1)
		maps.Copy(value, d.Metadata)
		value[contentKey] = d.PageContent
		id := uuid.NewString()
		ids = append(ids, id)
		ops = append(ops, store.PutOp{Namespace: ns, Key: id, Value: value, Options: store.PutOptions{Index: []string{contentKey}}})
	}
	if len(ops) == 0 {
		return []string{}, nil
	}
	if _, err := v.st.Batch(ctx, ops); err != nil {
		return nil, fmt.Errorf("langchaingo: add documents: %w", err)
	}
	return ids, nil
}

// SimilaritySearch implements vectorstores.VectorStore: the numDocuments
// documents closest to query, best first, each with its score (higher is
// closer); WithScoreThreshold drops those below it, WithFilters takes a
// memvault filter (map[string]any) on metadata keys.
func (v *VectorStore) SimilaritySearch(ctx context.Context, query string, numDocuments int, opts ...vectorstores.Option) ([]schema.Document, error) {
	ns, o, err := v.namespace(opts)
	if err != nil {
		return nil, err
	}
	var filter map[string]any
	if o.Filters != nil {
		f, ok := o.Filters.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("langchaingo: filters must be a map[string]any (a memvault filter), got %T", o.Filters)
		}
		filter = f
	}
	found, err := v.st.Search(ctx, ns, store.SearchOptions{Query: query, Limit: numDocuments, Filter: filter})
	if err != nil {
		return nil, fmt.Errorf("langchaingo: similarity search: %w", err)
	}
	docs := make([]schema.Document, 0, len(found))
	for _, it := range found {
		if it.Score == nil {
			return nil, errors.New("langchaingo: similarity search: the store has no semantic index (store.IndexConfig)")
		}
		if float32(*it.Score) < o.ScoreThreshold {
			continue
		}
		docs = append(docs, document(it))
	}
	return docs, nil
}

func document(it store.SearchItem) schema.Document {
	md := make(map[string]any, len(it.Value))
	maps.Copy(md, it.Value)
	text, _ := md[contentKey].(string)
	delete(md, contentKey)
	return schema.Document{PageContent: text, Metadata: md, Score: float32(*it.Score)}
}
