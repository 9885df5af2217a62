package memvaulttest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// A test takes its parts from the kits below memvaulttest: here the fixed
// test key (testkeys.Encrypting) seals a SQLite saver's values and
// testkeys.NoPlaintext checks the files for a secret, which a saver
// without encryption leaves in them. In a test both take the test's t;
// the example passes each check a fresh zero testing.T and prints whether
// the check failed it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-kits")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	const secret = "diagnosis: hypertension"
	write := func(name string, ser serde.Serializer) []string {
		path := filepath.Join(dir, name)
		saver, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: ser})
		if err != nil {
			fmt.Println(err)
			return nil
		}
		defer saver.Close()
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(-1),
			ChannelValues:   map[string]any{"notes": secret},
			ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
		if _, err := saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, nil, cp.ChannelVersions); err != nil {
			fmt.Println(err)
		}
		return []string{path, path + "-wal"}
	}

	sealed := &testing.T{}
	testkeys.NoPlaintext(sealed, write("sealed.db", testkeys.Encrypting(&testing.T{})), secret)
	fmt.Println("sealed files fail the check:", sealed.Failed())

	plain := &testing.T{}
	testkeys.NoPlaintext(plain, write("plain.db", nil), secret)
	fmt.Println("plaintext files fail the check:", plain.Failed())
	// Output:
	// sealed files fail the check: false
	// plaintext files fail the check: true
}
