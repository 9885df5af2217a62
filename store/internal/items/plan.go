package items

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/spaces"
)

// Plan is a batch checked and prepared before a driver touches storage:
// its writes, one per key, and the vectors of its search queries.
type Plan struct {
	// Puts are the batch's writes (deletes have a nil Value), one per key:
	// of several writes to a key the last wins, in the slot of the first.
	Puts []*Put
	// Queries maps each search query text to its vector (nil without an
	// index).
	Queries map[string][]float32
}

// Config is what the core needs of a store to prepare writes.
type Config struct {
	// Driver prefixes errors ("memory", "sqlite", "postgres").
	Driver string
	TTL    *store.TTLConfig
	Index  *store.IndexConfig
	// Spaces keeps each data subject's vectors in a space of its own (nil:
	// one shared space); see UseSerializer.
	Spaces *spaces.Spaces
	// reembedTo is the spaces Reembed moves vectors into: Spaces, or the
	// subjects' own spaces when the index asks for the shared one.
	reembedTo *spaces.Spaces
}

// UseSerializer gives an indexed store whose serializer keeps per-subject
// keys (keys.Hierarchy) one vector space per subject (package spaces),
// unless its index asks for the shared space
// (store.IndexConfig.DangerousSharedSubjectVectors). Drivers call it once
// their Index is set.
func (c *Config) UseSerializer(s serde.Serializer) {
	c.Spaces, c.reembedTo = nil, nil
	if c.Index == nil {
		return
	}
	c.reembedTo = spaces.Of(s, c.Index.Dims)
	if !c.Index.DangerousSharedSubjectVectors {
		c.Spaces = c.reembedTo
	}
}

// VectorName is the name a store records for the vectors the embedder
// named embedder makes in its spaces (see indexing.CheckEmbedder):
// embedder itself, plus spaces.Spaces.Suffix when subjects have spaces of
// their own.
func (c Config) VectorName(embedder string) string { return embedder + c.Spaces.Suffix() }

// PlanBatch checks every op of a batch (an invalid op fails the batch
// before anything runs; the error names its index), prepares the writes and
// embeds their texts and the queries in one embedder call each.
func (c Config) PlanBatch(ctx context.Context, ops []store.Op) (*Plan, error) {
	return c.plan(ctx, ops, true)
}

// PlanWrites is PlanBatch for a driver that embeds search queries itself
// when it runs them: every op is checked, only the writes are prepared.
func (c Config) PlanWrites(ctx context.Context, ops []store.Op) ([]*Put, error) {
	pl, err := c.plan(ctx, ops, false)
	if err != nil {
		return nil, err
	}
	return pl.Puts, nil
}

func (c Config) plan(ctx context.Context, ops []store.Op, queries bool) (*Plan, error) {
	pl := &Plan{Queries: map[string][]float32{}}
	byKey := map[[2]string]int{}
	for i, op := range ops {
		if err := ValidateOp(op); err != nil {
			return nil, fmt.Errorf("%s: op %d: %w", c.Driver, i, err)
		}
		switch o := op.(type) {
		case store.SearchOp:
			if queries && c.Index != nil && o.Options.Query != "" {
				pl.Queries[o.Options.Query] = nil
			}
		case store.PutOp:
			p, err := Prepare(o, c.TTL, c.Index)
			if err != nil {
				return nil, fmt.Errorf("%s: op %d: %w", c.Driver, i, err)
			}
			p.Op = i
			k := [2]string{p.Prefix, p.Key}
			if j, ok := byKey[k]; ok {
				p.Op = pl.Puts[j].Op
				pl.Puts[j] = p
			} else {
				byKey[k] = len(pl.Puts)
				pl.Puts = append(pl.Puts, p)
			}
		}
	}
	if err := c.embed(ctx, pl.Puts, pl.Queries); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Driver, err)
	}
	return pl, nil
}

// PlanPutIf checks and prepares the write of a conditional put (a nil value
// is ErrInvalidArgument) and embeds its texts.
func (c Config) PlanPutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts []store.PutOption) (*Put, error) {
	op, err := PutIfOp(ns, key, value, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Driver, err)
	}
	p, err := Prepare(op, c.TTL, c.Index)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Driver, err)
	}
	if err := c.embed(ctx, []*Put{p}, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Driver, err)
	}
	return p, nil
}

// PreparePuts is PlanBatch for a batch of writes only: the writes of ops,
// one per key, checked, prepared and embedded in one embedder call.
func (c Config) PreparePuts(ctx context.Context, ops []store.PutOp) ([]*Put, error) {
	all := make([]store.Op, len(ops))
	for i, op := range ops {
		all[i] = op
	}
	return c.PlanWrites(ctx, all)
}
