package mongostore_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongostore"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// newStore returns a store on db, closed at the end of the test.
func newStore(t testing.TB, db *mongo.Database, opts mongostore.Options) *mongostore.Store {
	t.Helper()
	s, err := mongostore.New(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// encrypted returns memvault's default encrypting serializer under a fixed
// test key.
func encrypted(t testing.TB) serde.Serializer {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func runConformance(t *testing.T, sd func(t testing.TB) serde.Serializer) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return newStore(t, mongotest.Database(t), mongostore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd(t)})
	})
}

func TestConformance(t *testing.T) {
	runConformance(t, func(testing.TB) serde.Serializer { return nil })
}

func TestConformanceEncrypted(t *testing.T) {
	runConformance(t, encrypted)
}

// TestConformanceSubjects runs the suite with per-subject keys: each
// namespace's values sealed under the data key of the subject it names,
// its vectors in the subject's space.
func TestConformanceSubjects(t *testing.T) {
	runConformance(t, func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) })
}

func TestReencrypt(t *testing.T) {
	db := mongotest.Database(t)
	storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := mongostore.New(context.Background(), db, mongostore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func TestErasure(t *testing.T) {
	db := mongotest.Database(t)
	storetest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) store.Store {
		return newStore(t, db, mongostore.Options{Serde: s})
	})
}

// TestConformanceCodeIndex runs the suite with searches ranked by the code
// index, as large stores are (the suite's stores are small enough for the
// exact in-process copy).
func TestConformanceCodeIndex(t *testing.T) {
	mongostore.NoFloatCopy(t)
	runConformance(t, func(testing.TB) serde.Serializer { return nil })
}

// TestConformanceNoVectorIndex runs the suite with searches scoring every
// vector read from the server.
func TestConformanceNoVectorIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return newStore(t, mongotest.Database(t), mongostore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, VectorIndexBytes: -1})
	})
}
