package sqliteaudit

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHostileRowTimesNotEchoed: a trail file whose rows hold a time that
// is no time — 64 KiB of it, with a pending id as long — is refused with
// an error that names them by length, not one that repeats them whole.
func TestHostileRowTimesNotEchoed(t *testing.T) {
	ctx := context.Background()
	tb, err := Open(ctx, filepath.Join(t.TempDir(), "trail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	huge := strings.Repeat("yesterday\x00", 6554)
	if err := tb.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit_pending (id, at, principal, op, target, subject, key_id, mac) VALUES (?, ?, 'p', 'checkpoint.write', 't', '', '', 'x')`, huge, huge); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO memvault_audit (seq, at, principal, op, target, subject, key_id, link, mac) VALUES (1, ?, 'p', 'checkpoint.write', 't', '', '', 'l', 'm')`, huge)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, perr := tb.PagePending(ctx, time.Time{}, "", 10)
	_, rerr := tb.Page(ctx, 0, 10)
	for what, err := range map[string]error{"pending record": perr, "record": rerr} {
		if err == nil {
			t.Errorf("%s with a 64 KiB time: no error", what)
			continue
		}
		if len(err.Error()) > 400 || strings.Contains(err.Error(), "yesterday") {
			t.Errorf("%s with a 64 KiB time: a %d-byte error echoing it: %.200q…", what, len(err.Error()), err.Error())
		}
	}
}
