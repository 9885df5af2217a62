package mongovault_test

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestWhatIsEncrypted: README's "What is encrypted, and what is not" on
// MongoDB (vaulttest.WhatIsEncrypted, as SQLite and PostgreSQL run it):
// every document of every collection of the database, read raw (its BSON
// bytes: strings as UTF-8, binary fields as their bytes), holds the
// plaintext markers README lists and no secret value nor a memory's word.
func TestWhatIsEncrypted(t *testing.T) {
	db := mongotest.Database(t)
	vaulttest.WhatIsEncrypted(t, map[string]string{"MEMVAULT_DSN": mongotest.URI(t), "MEMVAULT_SCHEMA": db.Name()}, func(t *testing.T) string {
		ctx := t.Context()
		names, err := db.ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatal("the database holds no collection: nothing was stored there")
		}
		var raw strings.Builder
		for _, name := range names {
			cur, err := db.Collection(name).Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			for cur.Next(ctx) {
				raw.WriteString(name + ": ")
				raw.Write(cur.Current)
				raw.WriteString("\n")
			}
			if err := cur.Err(); err != nil {
				t.Fatal(err)
			}
			cur.Close(ctx)
		}
		return raw.String()
	})
}

// TestPlaintextWithKey: a plaintext MongoDB database opened with a key is
// refused unless plaintext is allowed (vaulttest.PlaintextWithKeyCheck).
func TestPlaintextWithKey(t *testing.T) {
	vaulttest.PlaintextWithKeyCheck(t, map[string]string{"MEMVAULT_DSN": mongotest.URI(t), "MEMVAULT_SCHEMA": mongotest.Database(t).Name()})
}
