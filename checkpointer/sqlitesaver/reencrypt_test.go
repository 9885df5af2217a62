package sqlitesaver_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

func TestReencrypt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rotate.db")
	checkpointertest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := sqlitesaver.Open(context.Background(), path, sqlitesaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return sv
	})
}

func TestErasure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erase.db")
	checkpointertest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := sqlitesaver.Open(context.Background(), path, sqlitesaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sv.Close() })
		return sv
	})
}

// TestReencryptCompactsTheFile: Saver.Reencrypt by itself (a program
// using the saver, not the CLI) leaves no envelope under the retired key
// in the database file or its log after plaintext → K1 → K2. On the code
// before compaction, the log held the K1 pages and the unallocated gaps
// of rebalanced pages held copies of K1 cells, some of which opened with
// K1.
func TestReencryptCompactsTheFile(t *testing.T) {
	ctx := context.Background()
	const n = 600
	path := filepath.Join(t.TempDir(), "carve.db")
	toK1, toK2, k1 := carve.Rotation(t)
	open := func(s serde.Serializer) *sqlitesaver.Saver {
		sv, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return sv
	}
	sv := open(nil)
	for i := range n {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
			ChannelValues:   map[string]any{"notes": strings.Repeat(fmt.Sprint("note ", i, " "), 1+(i*7919)%97)},
			ChannelVersions: map[string]string{"notes": sv.NextVersion("")}}
		if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t", i%20)}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	sv.Close()
	sv = open(toK1)
	if st, err := sv.Reencrypt(ctx, reencrypt.Options{}); err != nil || st.Rewritten != n {
		t.Fatalf("plaintext to K1: %+v %v", st, err)
	}
	sv.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	values, err := carve.Stored(ctx, raw)
	raw.Close()
	if err != nil || len(values) != n {
		t.Fatalf("%d values under K1: %v", len(values), err)
	}
	sv = open(toK2)
	defer sv.Close()
	if st, err := sv.Reencrypt(ctx, reencrypt.Options{}); err != nil || st.Rewritten != n {
		t.Fatalf("K1 to K2: %+v %v", st, err)
	}
	f, err := carve.Scan([]string{path, path + "-wal"}, k1, values)
	if err != nil {
		t.Fatal(err)
	}
	if f.Headers != 0 {
		t.Fatalf("%d images under K1 in the file or its log, %d of them open with K1", f.Headers, f.Opened)
	}
}
