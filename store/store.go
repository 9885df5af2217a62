package store

import (
	"context"
	"time"

	"github.com/memvault/memvault/embeddings"
)

// Item is a stored memory.
type Item struct {
	Namespace Namespace
	Key       string
	Value     map[string]any
	CreatedAt time.Time
	// UpdatedAt is when the item was last written. Every write moves it
	// forward, by at least the backend's resolution (1 µs on PostgreSQL)
	// when the clock has not, so it names one version of the item (see
	// PutCondition).
	UpdatedAt time.Time
	// ExpiresAt is when the item expires (zero: never). A read that
	// refreshes the TTL returns the refreshed expiry. LangGraph does not
	// expose it; caches use it to avoid serving expired items.
	ExpiresAt time.Time
}

// SearchItem is an Item found by Search. Score is the similarity to the
// query (higher is closer; see Distance) or nil when the search had no query
// or the item has no vectors.
type SearchItem struct {
	Item
	Score *float64
}

// Store is namespaced, cross-thread memory. Implementations are safe for
// concurrent use.
type Store interface {
	// Get returns the item, or (nil, nil) when absent (or expired and the
	// store omits expired items).
	Get(ctx context.Context, ns Namespace, key string, opts ...GetOption) (*Item, error)
	// Put creates or replaces the item. CreatedAt is kept on replace.
	Put(ctx context.Context, ns Namespace, key string, value map[string]any, opts ...PutOption) error
	// Delete removes the item; deleting an absent item is not an error.
	Delete(ctx context.Context, ns Namespace, key string) error
	// Search lists items under a namespace prefix, ranked by similarity to
	// opt.Query when given (and an index is configured), otherwise newest
	// update first.
	Search(ctx context.Context, prefix Namespace, opt SearchOptions) ([]SearchItem, error)
	// ListNamespaces lists the namespaces that hold items.
	ListNamespaces(ctx context.Context, opt ListNamespacesOptions) ([]Namespace, error)
	// Batch runs ops and returns one Result per op, in order. Reads see the
	// state before the batch's puts; of several puts to one key the last
	// wins.
	Batch(ctx context.Context, ops []Op) ([]Result, error)
}

// Sweeper is implemented by stores that can delete expired items on
// demand (besides their background sweeper).
type Sweeper interface {
	// Sweep deletes the items expired at the store's current time and
	// returns how many it deleted.
	Sweep(ctx context.Context) (int, error)
}

// SearchOptions narrows Search.
type SearchOptions struct {
	// Query ranks items by semantic similarity when the store has an index.
	Query string
	// Filter keeps items whose value matches (see Filter).
	Filter map[string]any
	// Limit caps the result; 0 means DefaultSearchLimit.
	Limit int
	// Offset skips that many results.
	Offset int
	// RefreshTTL overrides TTLConfig's refresh-on-read for this call.
	RefreshTTL *bool
}

// DefaultSearchLimit is LangGraph's default search limit.
const DefaultSearchLimit = 10

// DefaultListNamespacesLimit is LangGraph's default list_namespaces limit.
const DefaultListNamespacesLimit = 100

// ListNamespacesOptions narrows ListNamespaces. In Prefix and Suffix a "*"
// label matches exactly one label.
type ListNamespacesOptions struct {
	Prefix Namespace
	Suffix Namespace
	// MaxDepth truncates namespaces to their first MaxDepth labels (then
	// deduplicated); 0 means no truncation.
	MaxDepth int
	// Limit caps the result; 0 means DefaultListNamespacesLimit.
	Limit int
	// Offset skips that many namespaces.
	Offset int
}

// GetOption tunes Get.
type GetOption func(*GetOptions)

// GetOptions is the resolved form of GetOption values.
type GetOptions struct {
	// RefreshTTL overrides TTLConfig's refresh-on-read; nil keeps it.
	RefreshTTL *bool
}

// WithRefreshTTL sets whether this Get refreshes the item's TTL.
func WithRefreshTTL(refresh bool) GetOption {
	return func(o *GetOptions) { o.RefreshTTL = &refresh }
}

// PutOption tunes Put.
type PutOption func(*PutOptions)

// PutOptions is the resolved form of PutOption values.
type PutOptions struct {
	// Index: nil uses the store's IndexConfig.Fields; an empty non-nil slice
	// (WithoutIndex) embeds nothing and drops the item's vectors; otherwise
	// these field paths are embedded instead of the configured ones.
	Index []string
	// TTL: nil uses TTLConfig.DefaultTTL; a pointer to 0 stores no expiry.
	TTL *time.Duration
}

// WithIndex embeds these field paths for this put instead of the
// configured ones.
func WithIndex(fields ...string) PutOption {
	return func(o *PutOptions) {
		if fields == nil {
			fields = []string{}
		}
		o.Index = fields
	}
}

// WithoutIndex stores the item without vectors (previous vectors of the item
// are removed, unlike LangGraph, which keeps them stale).
func WithoutIndex() PutOption { return func(o *PutOptions) { o.Index = []string{} } }

// WithTTL makes the item expire d after it is written (or last read, when
// refresh on read is on). Stores keep TTLs in minutes, as LangGraph does.
func WithTTL(d time.Duration) PutOption { return func(o *PutOptions) { o.TTL = &d } }

// Op is one operation of a Batch: GetOp, PutOp, SearchOp or
// ListNamespacesOp.
type Op interface{ isOp() }

// GetOp reads one item.
type GetOp struct {
	Namespace  Namespace
	Key        string
	RefreshTTL *bool
}

// PutOp writes one item; a nil Value deletes it.
type PutOp struct {
	Namespace Namespace
	Key       string
	Value     map[string]any
	Options   PutOptions
}

// SearchOp searches under a namespace prefix.
type SearchOp struct {
	Prefix  Namespace
	Options SearchOptions
}

// ListNamespacesOp lists namespaces.
type ListNamespacesOp struct {
	Options ListNamespacesOptions
}

func (GetOp) isOp()            {}
func (PutOp) isOp()            {}
func (SearchOp) isOp()         {}
func (ListNamespacesOp) isOp() {}

// Result is the outcome of one Batch op: Item for GetOp (nil when absent),
// Items for SearchOp, Namespaces for ListNamespacesOp, nothing for PutOp.
type Result struct {
	Item       *Item
	Items      []SearchItem
	Namespaces []Namespace
}

// Distance is how vectors are compared and scored.
type Distance string

const (
	// Cosine scores 1 - cosine distance (the default).
	Cosine Distance = "cosine"
	// L2 scores minus the Euclidean distance.
	L2 Distance = "l2"
	// InnerProduct scores the dot product.
	InnerProduct Distance = "inner_product"
)

// IndexConfig enables semantic search.
type IndexConfig struct {
	// Dims is the vector length; defaults to Embedder.Dims().
	Dims int
	// Embedder turns texts into vectors; required.
	Embedder embeddings.Embedder
	// Fields are the field paths embedded by default; nil means ["$"], the
	// whole value.
	Fields []string
	// Distance defaults to Cosine.
	Distance Distance
	// DangerousSharedSubjectVectors keeps data subjects' vectors in the
	// space every other vector is in, as memvault did before subjects had
	// vector spaces of their own. By default, when the store's serializer
	// keeps per-subject keys for store namespaces (keys.Hierarchy with
	// Subjects.NamespacePrefix), each subject's vectors are rotated by a
	// secret that only the subject's keys select, so that erasing the
	// subject (destroying its keys) leaves no copy of its vectors, or of
	// the codes made from them, that can be compared with what the master
	// key computes for candidate texts. Set it only to keep searching a
	// store whose vectors were made that way (config does, with a warning)
	// until Reembedder.Reembed moves them into their spaces: until then,
	// whoever holds a backup and the master key can rank a dictionary
	// against an erased subject's vectors and recover its words.
	DangerousSharedSubjectVectors bool
}

// TTLConfig configures expiry. TTLs are kept in minutes as in LangGraph.
type TTLConfig struct {
	// DefaultTTL applies to puts without WithTTL; 0 means no expiry.
	DefaultTTL time.Duration
	// DisableRefreshOnRead stops Get and Search from extending the TTL of
	// the items they return (LangGraph's refresh_on_read, default on).
	DisableRefreshOnRead bool
	// SweepInterval is how often expired items are deleted; 0 means 5
	// minutes; negative disables the sweeper.
	SweepInterval time.Duration
}

// RefreshOnRead resolves a per-call override against the config.
func (c TTLConfig) RefreshOnRead(override *bool) bool {
	if override != nil {
		return *override
	}
	return !c.DisableRefreshOnRead
}
