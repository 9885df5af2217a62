package pgstore_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

func TestReencrypt(t *testing.T) {
	pool := pgtest.Pool(t)
	storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := pgstore.New(pool, pgstore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestErasure runs the erasure suite with the key table in memory (apart
// from the data: puts check their key in their transaction) and in the same
// database (puts hold the key's row: keys.SQLFencer).
func TestErasure(t *testing.T) {
	for name, apart := range map[string]bool{"keys apart": true, "keys in the database": false} {
		t.Run(name, func(t *testing.T) {
			pool, schema := pgtest.Schema(t)
			var table keys.Table
			if !apart {
				kt, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
				if err != nil {
					t.Fatal(err)
				}
				if err := kt.Setup(t.Context()); err != nil {
					t.Fatal(err)
				}
				table = kt
			}
			storetest.RunErasure(t, table, func(t *testing.T, s serde.Serializer) store.Store {
				st, err := pgstore.New(pool, pgstore.Options{Serde: s})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Setup(context.Background()); err != nil {
					t.Fatal(err)
				}
				return st
			})
		})
	}
}
