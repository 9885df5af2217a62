package carve_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/serde"
)

// A test seals a value under K1, reads what the database holds with
// Stored, and carves the files for images of it: under K1 they are found
// and open; under a key that sealed nothing, none are found. Tests of
// re-encryption make the same search after rotating to K2 and expect
// nothing under K1.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-carve")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agent.db")

	k1, err := crypto.ParseKey(carve.K1)
	if err != nil {
		fmt.Println(err)
		return
	}
	ring, err := crypto.NewKeyring(k1)
	if err != nil {
		fmt.Println(err)
		return
	}
	sealer, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		fmt.Println(err)
		return
	}
	saver, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: sealer})
	if err != nil {
		fmt.Println(err)
		return
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(-1),
		ChannelValues:   map[string]any{"notes": "the patient's diagnosis"},
		ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"step": -1}, cp.ChannelVersions); err != nil {
		fmt.Println(err)
		return
	}
	saver.Close()

	db, err := sql.Open(sqlitedb.DriverName, "file:"+path)
	if err != nil {
		fmt.Println(err)
		return
	}
	values, err := carve.Stored(ctx, db)
	db.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(values), "value(s) stored")

	files := []string{path, path + "-wal"}
	f, err := carve.Scan(files, k1, values)
	fmt.Println("under K1:", f.Headers > 0, f.Opened > 0, err)

	k2, err := crypto.ParseKey(carve.K2)
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err = carve.Scan(files, k2, values)
	fmt.Printf("under K2: %+v %v\n", f, err)
	// Output:
	// 1 value(s) stored
	// under K1: true true <nil>
	// under K2: {Headers:0 Opened:0} <nil>
}
