package pgsaver_test

import (
	"testing"

	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestReencrypt(t *testing.T) {
	checkpointertest.RunReencrypt(t, saverOn(pgtest.Pool(t)))
}

// TestErasure runs the erasure suite with the key table in memory (apart
// from the data: writers check their key in their transaction) and in the
// same database (writers hold the key's row: keys.SQLFencer).
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
			checkpointertest.RunErasure(t, table, saverOn(pool))
		})
	}
}
