package mongosaver

import (
	"context"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// TestLeasesReadFromPrimary: DrainWrites (an erasure's wait for the
// writes under way in every process) lists the leases held and watches
// them go; read from a secondary behind the primary it missed a lease
// just taken by a write that found the subject's keys live, and the
// erasure listed the subject's threads before that write landed. The
// leases are now read from the primary whatever the client's (the URI's)
// readPreference. FerretDB is one node, so the test asserts on the
// collection's read preference (the driver's unexported field: v2 has no
// accessor; the test fails if a release renames it).
func TestLeasesReadFromPrimary(t *testing.T) {
	name := mongotest.Database(t).Name()
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(t) + "/?readPreference=secondaryPreferred"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Disconnect(ctx)
	}()
	s, err := New(client.Database(name), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mode := func(v any) readpref.Mode {
		f := reflect.ValueOf(v).Elem().FieldByName("readPreference")
		if !f.IsValid() {
			t.Fatalf("%T has no readPreference field: the driver changed; read the preference another way", v)
		}
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*readpref.ReadPref).Mode()
	}
	if got := mode(s.d.cps); got != readpref.SecondaryPreferredMode {
		t.Fatalf("the URI's readPreference did not reach the client: checkpoints read with %v", got)
	}
	if got := mode(s.d.leases.coll); got != readpref.PrimaryMode {
		t.Errorf("the thread leases are read with %v; want primary", got)
	}
}
