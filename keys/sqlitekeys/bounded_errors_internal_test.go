package sqlitekeys

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileRowTimesNotEchoed: a key file whose rows hold a time that is
// no time (64 KiB of it; an erasure's under a subject as long) is refused
// with an error that names them by length, not one that repeats them
// whole (before: the subject quoted, then time.Parse's error quoting the
// time twice more).
func TestHostileRowTimesNotEchoed(t *testing.T) {
	ctx := context.Background()
	tb, err := Open(ctx, filepath.Join(t.TempDir(), "keys.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	huge := strings.Repeat("yesterday\x00", 6554)
	if err := tb.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_data_keys (`+cols+`) VALUES ('s', 1, 'k1', 'kek', x'00', ?)`, huge); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO memvault_erasures (subject, started_at, key_ids, trace, finished_at) VALUES (?, ?, '', x'00', ?)`, huge, huge, huge)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, kerr := tb.Keys(ctx, "s")
	_, eerr := tb.Erasure(ctx, huge)
	for what, err := range map[string]error{"key": kerr, "erasure": eerr} {
		if err == nil {
			t.Errorf("%s with a 64 KiB time: no error", what)
			continue
		}
		if len(err.Error()) > 400 || strings.Contains(err.Error(), "yesterday") {
			t.Errorf("%s with a 64 KiB time: a %d-byte error echoing it: %.200q…", what, len(err.Error()), err.Error())
		}
	}
}
