package keys_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// hostileID is a 64 KiB thread id holding NULs and bytes that are not
// UTF-8, starting with prefix (a subject, for the prefix mode).
func hostileID(prefix string) string {
	return prefix + strings.Repeat("\x00\xffx", 64<<10/3)
}

// TestHostileThreadIDsNotEchoed: the key hierarchy's errors name a thread
// (and a subject, or a key owner made of a thread) by idlimit.Name: a
// 64 KiB id with NULs and invalid UTF-8 comes back as its length, not
// whole. Before, ~40 errors quoted it with %q: 64 KiB in, 128-256 KiB of
// error out, each.
func TestHostileThreadIDsNotEchoed(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, sub keys.Subjects) (*keys.Hierarchy, *sqlitekeys.Table) {
		t.Helper()
		tb, err := sqlitekeys.Open(ctx, filepath.Join(t.TempDir(), "keys.db"))
		must(t, err)
		t.Cleanup(func() { tb.Close() })
		h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: tb, Subjects: sub})
		must(t, err)
		return h, tb
	}
	meta := keys.Subjects{ThreadMetadataKey: "user_id"}
	cases := []struct {
		name string
		err  func(t *testing.T) error
	}{
		{"prefix mode: bind to another subject", func(t *testing.T) error {
			h, _ := open(t, keys.Subjects{ThreadSeparator: ":"})
			return h.BindThreadTo(ctx, hostileID("alice:"), "carol")
		}},
		{"prefix mode: the id names a 64 KiB subject", func(t *testing.T) error {
			h, _ := open(t, keys.Subjects{ThreadSeparator: ":"})
			return h.BindThreadTo(ctx, hostileID("")+":t", "carol")
		}},
		{"metadata naming no subject", func(t *testing.T) error {
			h, _ := open(t, meta)
			return h.BindThread(ctx, hostileID("t"), map[string]any{"user_id": []any{hostileID("v")}})
		}},
		{"bound to another subject", func(t *testing.T) error {
			h, _ := open(t, meta)
			must(t, h.BindThreadTo(ctx, hostileID("t"), "carol"))
			return h.BindThreadTo(ctx, hostileID("t"), "dave")
		}},
		{"copy onto a thread of another subject", func(t *testing.T) error {
			h, _ := open(t, meta)
			must(t, h.BindThreadTo(ctx, hostileID("a"), "carol"))
			must(t, h.BindThreadTo(ctx, hostileID("b"), "dave"))
			return h.FollowThread(ctx, hostileID("b"), hostileID("a"))
		}},
		{"copy of an erased subject's thread", func(t *testing.T) error {
			h, _ := open(t, meta)
			must(t, h.BindThreadTo(ctx, hostileID("a"), "carol"))
			_, err := h.StartErasure(ctx, "carol")
			must(t, err)
			return h.FollowThread(ctx, hostileID("b"), hostileID("a"))
		}},
		{"copy of an erased subject's thread (memkeys)", func(t *testing.T) error {
			h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: memkeys.New(), Subjects: meta})
			must(t, err)
			must(t, h.BindThreadTo(ctx, hostileID("a"), "carol"))
			_, err = h.StartErasure(ctx, "carol")
			must(t, err)
			return h.FollowThread(ctx, hostileID("b"), hostileID("a"))
		}},
		{"a thread's own keys, the id not UTF-8", func(t *testing.T) error {
			h, _ := open(t, meta)
			_, err := h.SubjectSerializer(ctx, keys.ThreadKeyOwner(hostileID("t")), true)
			return err
		}},
		{"the key table failing", func(t *testing.T) error {
			h, tb := open(t, meta)
			tb.Close()
			_, err := h.ThreadSubject(ctx, hostileID("t"))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); len(msg) > 1024 || strings.Contains(msg, "\x00") || strings.Contains(msg, `\x00\xff`) {
				t.Fatalf("a %d-byte error: %.300q…", len(msg), msg)
			}
			t.Log(err)
		})
	}
}
