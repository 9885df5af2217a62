package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/store"
)

// embedderScript records the embedder (name, dims) in {P}:embedder unless
// one is recorded, and returns the record: ARGV = name, dims.
var embedderScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'name', ARGV[1], 'dims', ARGV[2])
end
return redis.call('HMGET', KEYS[1], 'name', 'dims')
`)

// checkEmbedder records the configured embedder's name and the size of
// its vectors with the first indexed open of a store, and refuses later
// opens with another name or another size (store.ErrEmbedderMismatch):
// their query vectors could not be compared with the stored ones. Names
// carry the key of keyed and sealed embedders, so vectors made under one
// key are refused under another.
func checkEmbedder(ctx context.Context, d *driver, idx *store.IndexConfig) error {
	if idx == nil || idx.Embedder == nil {
		return nil
	}
	name := idx.Embedder.Name()
	dims := idx.Dims
	if dims == 0 {
		dims = idx.Embedder.Dims()
	}
	res, err := embedderScript.Run(ctx, d.rdb, []string{d.k.base + "embedder"}, name, dims).Slice()
	if err != nil {
		return fmt.Errorf("redis: recording the embedder: %w", err)
	}
	recorded, _ := res[0].(string)
	rdims, _ := res[1].(string)
	rd, err := strconv.Atoi(rdims)
	if err != nil {
		return fmt.Errorf("%w: embedder record %q", ErrRecord, rdims)
	}
	if recorded != name || rd != dims {
		return fmt.Errorf("redis: %w", &store.EmbedderMismatchError{Recorded: recorded, Configured: name, RecordedDims: rd, ConfiguredDims: dims})
	}
	return nil
}
