// Package redisvault wires the Redis backend into vault.Open: importing
// it (the memvault CLI does) registers the redis://, rediss:// (TLS),
// redis+cluster:// and rediss+cluster:// schemes with
// vault.RegisterBackend, so that MEMVAULT_DSN (or the CLI's --dsn) set to
// a Redis URL opens the Redis checkpointer (package redissaver) with the
// configured serializer — plaintext, envelope or LangGraph encryption, as
// with SQLite and PostgreSQL — retention and version style.
//
// redis:// URLs are go-redis's (redis.ParseURL: redis://user:pass@host:6379/0
// with options such as ?dial_timeout=3s); the +cluster forms are
// redis.ParseClusterURL's, one seed node in the host and more as
// ?addr=host:port. The key prefix is MEMVAULT_SCHEMA (Config.Schema),
// else redissaver.DefaultPrefix. Redis needs nothing set up, so `memvault
// migrate` only checks the server answers; with Config.MustExist Open
// checks the same (a prefix has no existence of its own to check: a
// mistyped one reads as empty).
//
// The store is package redisstore under StorePrefix(MEMVAULT_SCHEMA),
// with the configured serializer, semantic search (vector sets on Redis 8)
// and TTL. Per-subject keys and the audit trail are refused by
// vault.Open (vault.ErrUnsupported), as are the census and compaction.
package redisvault

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// Name is vault.Handle.Backend for Redis databases.
const Name = "redis"

// Schemes are the URL schemes registered for Redis.
var Schemes = []string{"redis", "rediss", "redis+cluster", "rediss+cluster"}

// Backend is what this package registers.
var Backend = vault.Backend{Name: Name, Open: open}

// StorePrefix is the Redis store's key prefix for a MEMVAULT_SCHEMA of
// schema: redisstore.DefaultPrefix for "", else schema + ":store", so the
// checkpointer (under schema itself) and the store never share a key.
func StorePrefix(schema string) string {
	if schema == "" {
		return redisstore.DefaultPrefix
	}
	return schema + ":store"
}

func init() {
	for _, s := range Schemes {
		vault.RegisterBackend(s, Backend)
	}
}

// Client returns a client for dsn: a *redis.Client, or a
// *redis.ClusterClient for the +cluster schemes.
func Client(dsn string) (redis.UniversalClient, error) {
	scheme := vault.DSNScheme(dsn)
	if base, ok := strings.CutSuffix(scheme, "+cluster"); ok {
		opt, err := redis.ParseClusterURL(base + dsn[len(scheme):])
		if err != nil {
			return nil, fmt.Errorf("redisvault: MEMVAULT_DSN %s: %w", vault.RedactDSN(dsn), err)
		}
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(dsn)
	if err != nil {
		return nil, fmt.Errorf("redisvault: MEMVAULT_DSN %s: %w", vault.RedactDSN(dsn), err)
	}
	return redis.NewClient(opt), nil
}

// pingTimeout bounds the first round trip when ctx has no deadline.
const pingTimeout = 30 * time.Second

func open(ctx context.Context, c config.Config, o vault.BackendOptions) (*vault.BackendConn, error) {
	rdb, err := Client(c.DSN)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = rdb.Close()
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	err = rdb.Ping(pctx).Err()
	cancel()
	if err != nil {
		return nil, fmt.Errorf("redisvault: MEMVAULT_DSN %s: %w", vault.RedactDSN(c.DSN), err)
	}
	style := checkpointer.VersionInt // redissaver's default
	if o.VersionsSet {
		style = o.Versions
	}
	sv, err := redissaver.New(rdb, redissaver.Options{Prefix: c.Schema, Serde: o.Serde, StringVersions: style == checkpointer.VersionString,
		Retention: o.Retention, SweepInterval: o.RetentionSweepInterval})
	if err != nil {
		return nil, fmt.Errorf("redisvault: MEMVAULT_SCHEMA (the key prefix): %w", err)
	}
	conn := &vault.BackendConn{
		Saver: sv,
		Close: rdb.Close,
		Migrations: func(context.Context) ([]vault.Migration, error) {
			// Nothing to migrate: memvault's Redis layout needs no set-up.
			return []vault.Migration{{Table: "keys under " + cmp.Or(c.Schema, redissaver.DefaultPrefix)}}, nil
		},
	}
	conn.Store = func(ctx context.Context, so vault.StoreOptions) (store.Store, error) {
		return redisstore.New(ctx, rdb, redisstore.Options{Prefix: StorePrefix(c.Schema), Serde: so.Serde, Index: so.Index, TTL: so.TTL, CacheSize: so.CacheSize})
	}
	ok = true
	return conn, nil
}
