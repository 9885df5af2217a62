package core

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// badTSCases are ts values time.Parse refuses: printable text within the
// identifier limit (named once, quoted), long text and control bytes
// (named by length), and the parse errors whose own message quotes the
// value or a part of it (a range error, extra text after a time).
var badTSCases = map[string]struct{ ts, reason string }{
	"printable":    {strings.Repeat("x", 300) + "<tail>", `cannot parse byte 0 as "2006"`},
	"long":         {strings.Repeat("A", 64<<10), `cannot parse byte 0 as "2006"`},
	"NULs":         {strings.Repeat("\x00", 500), `cannot parse byte 0 as "2006"`},
	"month":        {"2024-13-01T00:00:00Z", "month out of range"},
	"extra text":   {"2024-05-04T06:32:42Z" + strings.Repeat("junk", 100) + "<tail>", "extra text at byte 20"},
	"stops midway": {"2024-05-04T06:32:" + strings.Repeat("y", 200) + "<tail>", `cannot parse byte 17 as "05"`},
}

// TestDecodeBadTSNamedOnceBounded: a stored document whose ts is no time
// is refused with ErrInvalidCheckpoint naming the value once, bounded, and
// the reason (before: ts %q, the whole value however long).
func TestDecodeBadTSNamedOnceBounded(t *testing.T) {
	for name, c := range badTSCases {
		t.Run(name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]any{"v": 4, "id": "1ef4f797-8335-6428-8001-8a1503f9b875", "ts": c.ts,
				"channel_values": map[string]any{}, "channel_versions": map[string]any{}, "versions_seen": map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = DecodeCheckpointJSON(doc)
			if !errors.Is(err, checkpointer.ErrInvalidCheckpoint) {
				t.Fatalf("err = %.200v, want ErrInvalidCheckpoint", err)
			}
			checkBadTSMessage(t, err.Error(), c.reason)
		})
	}
}

// checkBadTSMessage: msg names ts at most once (counted by "<tail>") (never when it is long),
// stays within the bound idlimit.Name keeps plus the reason, and gives the
// reason.
func checkBadTSMessage(t *testing.T, msg, reason string) {
	t.Helper()
	if len(msg) > 700 {
		t.Errorf("error of %d bytes: %.200s…", len(msg), msg)
	}
	// "<tail>" ends the values that have it: time.Parse's message
	// quotes the whole value, then the part where it stopped or the
	// extra text, both ending there.
	if n := strings.Count(msg, "<tail>"); n > 1 {
		t.Errorf("ts quoted %d times: %.300s", n, msg)
	}
	if strings.ContainsRune(msg, 0) {
		t.Errorf("raw NUL in the error")
	}
	if !strings.Contains(msg, reason) {
		t.Errorf("error %.300q lacks the reason %q", msg, reason)
	}
}
