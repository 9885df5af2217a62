package sqlitesaver

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
)

// TestStrictRefusesUnauthenticatedRows checks that, with an encrypting
// serializer, a row rewritten by someone who can write the database
// (plaintext tags, the "null" and "empty" markers on a pending write, a
// truncated ciphertext) fails to load instead of yielding a value.
func TestStrictRefusesUnauthenticatedRows(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		want      error
	}{
		{"blob json", `UPDATE checkpoint_blobs SET type = 'json', blob = CAST('"evil"' AS BLOB)`, serde.ErrPlaintextRefused},
		{"blob msgpack", `UPDATE checkpoint_blobs SET type = 'msgpack', blob = x'a46576696c'`, serde.ErrPlaintextRefused},
		{"blob null", `UPDATE checkpoint_blobs SET type = 'null', blob = x''`, serde.ErrPlaintextRefused},
		{"blob truncated", `UPDATE checkpoint_blobs SET blob = substr(blob, 1, 20)`, serde.ErrDecrypt},
		{"blob relabelled", `UPDATE checkpoint_blobs SET type = 'msgpack+mvgcm'`, serde.ErrDecrypt},
		{"write json", `UPDATE checkpoint_writes SET type = 'json', blob = CAST('"evil"' AS BLOB)`, serde.ErrPlaintextRefused},
		{"write null", `UPDATE checkpoint_writes SET type = 'null', blob = x''`, serde.ErrPlaintextRefused},
		{"write empty", `UPDATE checkpoint_writes SET type = 'empty', blob = x''`, serde.ErrPlaintextRefused},
		{"write no type", `UPDATE checkpoint_writes SET type = NULL`, serde.ErrPlaintextRefused},
		{"write moved", `UPDATE checkpoint_writes SET idx = 7`, serde.ErrDecrypt},
		{"write relabelled to another channel", `UPDATE checkpoint_writes SET channel = 'approved_command'`, serde.ErrDecrypt},
		{"inline value", `UPDATE checkpoints SET checkpoint = json_set(checkpoint, '$.channel_values.injected', 'evil', '$.channel_versions.injected', '1')`, serde.ErrPlaintextRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openSaver(t, filepath.Join(t.TempDir(), "strict.db"), Options{Serde: encrypted(t)})
			cfg := put(t, s, checkpointer.Config{ThreadID: "t1"}, 1, "secret")
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "c", Value: "approved"}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			if _, err := s.d.db.Writer().Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("GetTuple = %+v, %v; want %v", tp, err, tc.want)
			}
		})
	}
}
