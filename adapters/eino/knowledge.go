package eino

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"
	"github.com/google/uuid"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

// Embedder is a memvault embedder as an Eino embedding.Embedder (vectors
// widened from float32 to float64): any OpenAI-compatible endpoint
// (embeddings/openai) or the offline embedder, keyed or sealed as memvault
// configures it.
type Embedder struct{ e embeddings.Embedder }

var _ embedding.Embedder = Embedder{}

// NewEmbedder wraps e.
func NewEmbedder(e embeddings.Embedder) Embedder { return Embedder{e: e} }

// EmbedStrings implements embedding.Embedder (the texts as documents).
func (e Embedder) EmbedStrings(ctx context.Context, texts []string, _ ...embedding.Option) ([][]float64, error) {
	vs, err := e.e.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("eino: embed: %w", err)
	}
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = make([]float64, len(v))
		for j, x := range v {
			out[i][j] = float64(x)
		}
	}
	return out, nil
}

// contentKey is the item field holding a document's content (the field the
// store embeds); the document's metadata are the other fields.
const contentKey = "content"

// KnowledgeOptions configures a Knowledge base. The zero value is usable.
type KnowledgeOptions struct {
	// Namespace holds the documents; nil means {"eino", "docs"}. Documents
	// sit one label below it: the Index option's, or "default".
	Namespace store.Namespace
	// TopK is how many documents Retrieve returns without a TopK option;
	// 0 means 4.
	TopK int
}

// Knowledge is an Eino indexer.Indexer and retriever.Retriever over a
// memvault store with a semantic index (pgvector on PostgreSQL, an exact
// scan on SQLite): documents are store items, embedded by the store's own
// embedder, and Retrieve is the store's Search. With an encrypting store
// their content and metadata are sealed. The embedder options of Eino are
// refused: the store records which embedder made its vectors.
type Knowledge struct {
	st   store.Store
	ns   store.Namespace
	topK int
}

var (
	_ indexer.Indexer     = (*Knowledge)(nil)
	_ retriever.Retriever = (*Knowledge)(nil)
)

// NewKnowledge returns the knowledge base of st.
func NewKnowledge(st store.Store, opts KnowledgeOptions) (*Knowledge, error) {
	ns := opts.Namespace
	if ns == nil {
		ns = store.Namespace{"eino", "docs"}
	}
	if err := ns.Validate(); err != nil {
		return nil, fmt.Errorf("eino: %w", err)
	}
	k := &Knowledge{st: st, ns: ns, topK: opts.TopK}
	if k.topK <= 0 {
		k.topK = 4
	}
	return k, nil
}

func (k *Knowledge) namespace(index *string) (store.Namespace, error) {
	label := "default"
	if index != nil && *index != "" {
		label = *index
	}
	ns := append(append(store.Namespace(nil), k.ns...), label)
	if err := ns.Validate(); err != nil {
		return nil, fmt.Errorf("eino: index: %w", err)
	}
	return ns, nil
}

// Store implements indexer.Indexer: the documents are put in one batch (one
// embedder call) under their ids, or new ones for those without, which it
// returns in order.
func (k *Knowledge) Store(ctx context.Context, docs []*schema.Document, opts ...indexer.Option) ([]string, error) {
	o := indexer.GetCommonOptions(nil, opts...)
	if o.Embedding != nil {
		return nil, errors.New("eino: the store embeds with its own embedder (store.IndexConfig); drop the Embedding option")
	}
	ns, err := k.namespace(o.Index)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(docs))
	ops := make([]store.Op, len(docs))
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("eino: document %d is nil", i)
		}
		if _, clash := d.MetaData[contentKey]; clash {
			return nil, fmt.Errorf("eino: metadata key %q is reserved for the document's content", contentKey)
		}
		ids[i] = d.ID
		if ids[i] == "" {
			ids[i] = uuid.NewString()
		}
		value := make(map[string]any, len(d.MetaData)+1)
		maps.Copy(value, d.MetaData)
		value[contentKey] = d.Content
		ops[i] = store.PutOp{Namespace: ns, Key: ids[i], Value: value, Options: store.PutOptions{Index: []string{contentKey}}}
	}
	if len(ops) == 0 {
		return []string{}, nil
	}
	if _, err := k.st.Batch(ctx, ops); err != nil {
		return nil, fmt.Errorf("eino: store documents: %w", err)
	}
	return ids, nil
}

// Retrieve implements retriever.Retriever: the TopK documents closest to
// query, best first, each with its score (higher is closer); a
// ScoreThreshold option drops lower ones.
func (k *Knowledge) Retrieve(ctx context.Context, query string, opts ...retriever.Option) ([]*schema.Document, error) {
	o := retriever.GetCommonOptions(&retriever.Options{TopK: &k.topK}, opts...)
	if o.Embedding != nil {
		return nil, errors.New("eino: the store embeds with its own embedder (store.IndexConfig); drop the Embedding option")
	}
	ns, err := k.namespace(o.Index)
	if err != nil {
		return nil, err
	}
	found, err := k.st.Search(ctx, ns, store.SearchOptions{Query: query, Limit: *o.TopK})
	if err != nil {
		return nil, fmt.Errorf("eino: retrieve: %w", err)
	}
	docs := make([]*schema.Document, 0, len(found))
	for _, it := range found {
		if it.Score == nil {
			return nil, errors.New("eino: retrieve: the store has no semantic index (store.IndexConfig)")
		}
		if o.ScoreThreshold != nil && *it.Score < *o.ScoreThreshold {
			continue
		}
		md := make(map[string]any, len(it.Value))
		maps.Copy(md, it.Value)
		content, _ := md[contentKey].(string)
		delete(md, contentKey)
		d := &schema.Document{ID: it.Key, Content: content, MetaData: md}
		docs = append(docs, d.WithScore(*it.Score))
	}
	return docs, nil
}
