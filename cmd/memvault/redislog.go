package main

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// quietRedisLog drops go-redis's own log lines (its pool prints "failed to
// dial after 5 attempts" to stderr each time it gives up): the CLI prints
// each error once, on one line, from the error the command returns.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

var silenceRedis = sync.OnceFunc(func() { redis.SetLogger(quietRedisLog{}) })
