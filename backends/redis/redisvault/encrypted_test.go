package redisvault_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestWhatIsEncrypted: README's "What is encrypted, and what is not" on
// Redis 8 (vaulttest.WhatIsEncrypted, as SQLite and PostgreSQL run it):
// every key under the prefix, its name and its whole content read by its
// type (strings, hashes, sorted sets, sets, lists, streams, JSON, and
// vector sets: element names, attributes and raw vectors), holds the
// plaintext markers README lists and no secret value nor a memory's word.
// A key of a type the dump cannot read fails the test rather than being
// passed over.
func TestWhatIsEncrypted(t *testing.T) {
	srv := redistest.Shared(t, 8)
	prefix := redistest.Prefix()
	vaulttest.WhatIsEncrypted(t, map[string]string{"MEMVAULT_DSN": "redis://" + srv.Addr, "MEMVAULT_SCHEMA": prefix}, func(t *testing.T) string {
		ctx := t.Context()
		rdb := srv.Client(t)
		var keys []string
		// The store's keys carry the prefix inside a hash tag ({prefix:store}…).
		iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			t.Fatal("no key under the prefix: nothing was stored there")
		}
		slices.Sort(keys)
		var raw strings.Builder
		types := map[string]int{}
		put := func(v any, err error) {
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&raw, "%v\n", v)
		}
		for _, k := range keys {
			typ, err := rdb.Type(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			types[typ]++
			raw.WriteString(k + " (" + typ + "): ")
			switch typ {
			case "string":
				put(rdb.Get(ctx, k).Result())
			case "hash":
				put(rdb.HGetAll(ctx, k).Result())
			case "zset":
				put(rdb.ZRangeWithScores(ctx, k, 0, -1).Result())
			case "set":
				put(rdb.SMembers(ctx, k).Result())
			case "list":
				put(rdb.LRange(ctx, k, 0, -1).Result())
			case "stream":
				put(rdb.XRange(ctx, k, "-", "+").Result())
			case "ReJSON-RL":
				put(rdb.Do(ctx, "JSON.GET", k).Result())
			case "vectorset":
				n, err := rdb.Do(ctx, "VCARD", k).Int64()
				if err != nil {
					t.Fatal(err)
				}
				els, err := rdb.Do(ctx, "VRANDMEMBER", k, n).StringSlice()
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(els)) != n {
					t.Fatalf("vector set %s: VRANDMEMBER gave %d of %d elements", k, len(els), n)
				}
				for _, el := range els {
					raw.WriteString(el + " ")
					attr, err := rdb.Do(ctx, "VGETATTR", k, el).Result()
					if err != nil && err.Error() != "redis: nil" {
						t.Fatal(err)
					}
					fmt.Fprintf(&raw, "%v ", attr)
					put(rdb.Do(ctx, "VEMB", k, el, "RAW").Result())
				}
			default:
				t.Fatalf("key %s of type %q: the dump cannot read it", k, typ)
			}
		}
		// Redis 8 keeps the store's vectors in a vector set too (README):
		// its element names and attributes are read, not assumed empty.
		if types["vectorset"] == 0 {
			t.Fatalf("no vector set among the keys (%v): the store's vectors were not dumped", types)
		}
		return raw.String()
	})
}

// TestPlaintextWithKey: a plaintext Redis database opened with a key is
// refused unless plaintext is allowed (vaulttest.PlaintextWithKeyCheck).
func TestPlaintextWithKey(t *testing.T) {
	srv := redistest.Shared(t, 8)
	vaulttest.PlaintextWithKeyCheck(t, map[string]string{"MEMVAULT_DSN": "redis://" + srv.Addr, "MEMVAULT_SCHEMA": redistest.Prefix()})
}
