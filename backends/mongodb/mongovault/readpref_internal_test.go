package mongovault

import (
	"reflect"
	"testing"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

// readPrefOf returns the read preference v (a *mongo.Collection or a
// *mongo.Database) reads with. The driver (v2) has no accessor for it, so
// its unexported field is read: the test fails, rather than pass, when a
// driver release renames it.
func readPrefOf(t *testing.T, v any) readpref.Mode {
	t.Helper()
	f := reflect.ValueOf(v).Elem().FieldByName("readPreference")
	if !f.IsValid() {
		t.Fatalf("%T has no readPreference field: the driver changed; read the preference another way", v)
	}
	rp := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*readpref.ReadPref)
	if rp == nil {
		t.Fatalf("%T reads with no read preference", v)
	}
	return rp.Mode()
}

// TestMarksReadFromPrimary (session 25's closing note): the erasure
// guard's argument — a write stores its document, then reads the
// subject's mark, and takes the write back when the mark refuses it —
// holds only when that read sees every mark written before it, which a
// secondary behind the primary does not. A URI with
// readPreference=secondaryPreferred sent the marks' reads (the guard's,
// the intents', the erasure lock's) to a secondary when there was one.
// memvault_meta is now read from the primary whatever the URI says.
// FerretDB is one node (the driver sends it every read, and sends no
// $readPreference to a standalone server), so the test asserts on the
// collection's read preference, not on where a read went.
func TestMarksReadFromPrimary(t *testing.T) {
	db := mongotest.Database(t)
	conn, err := open(t.Context(), config.Config{DSN: mongotest.URI(t) + "/?readPreference=secondaryPreferred", Schema: db.Name()}, vault.BackendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	meta := conn.AuditMeta.(auditMeta).coll
	if got := readPrefOf(t, meta.Database()); got != readpref.SecondaryPreferredMode {
		t.Fatalf("the URI's readPreference did not reach the client: the database reads with %v", got)
	}
	if got := readPrefOf(t, meta); got != readpref.PrimaryMode {
		t.Errorf("the marks (erasure guard, intents) are read with %v; want primary", got)
	}
	if got := readPrefOf(t, conn.ErasureLock.(eraseLock).coll); got != readpref.PrimaryMode {
		t.Errorf("the erasure lock's lease is read with %v; want primary", got)
	}
}
