package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// NewNoFloatCopy is New without the engine's exact in-process float copy
// of a small store's vectors, so that searches rank by the code index.
func NewNoFloatCopy(ctx context.Context, rdb redis.UniversalClient, opt Options) (*Store, error) {
	return open(ctx, rdb, opt, 0)
}
