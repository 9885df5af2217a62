package threadfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer/threadfile"
)

// TestImportBadTSNamedOnce: a line whose ts is no time is refused with
// ErrInvalidFile naming the ts once, bounded, with time.Parse's reason
// only. Before, a ts within the identifier limit came back twice (ts %q,
// then time.Parse's error, which quotes it again, and once more the part
// it stopped at), and 500 control bytes as 2 KiB each time.
func TestImportBadTSNamedOnce(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct{ ts, reason string }{
		"printable":  {strings.Repeat("x", 300) + "<tail>", `cannot parse byte 0 as "2006"`},
		"NULs":       {strings.Repeat("\x00", 500), `cannot parse byte 0 as "2006"`},
		"long":       {strings.Repeat("A", 1<<20) + "<tail>", `cannot parse byte 0 as "2006"`},
		"month":      {"2024-13-01T00:00:00Z", "month out of range"},
		"extra text": {"2024-05-04T06:32:42Z" + strings.Repeat("junk", 100) + "<tail>", "extra text at byte 20"},
	}
	sv := savers()["memory"](t)
	putThread(t, sv, "t", 2)
	lines := strings.Split(strings.TrimSpace(string(export(t, sv, "t"))), "\n")
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatal(err)
			}
			m["ts"] = c.ts
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			dst := savers()["memory"](t)
			_, err = threadfile.Import(ctx, strings.NewReader(lines[0]+"\n"+string(b)+"\n"), dst, threadfile.ImportOptions{})
			if !errors.Is(err, threadfile.ErrInvalidFile) {
				t.Fatalf("err = %.200v, want ErrInvalidFile", err)
			}
			msg := err.Error()
			if len(msg) > 700 {
				t.Errorf("error of %d bytes: %.200s…", len(msg), msg)
			}
			if n := strings.Count(msg, "<tail>"); n > 1 {
				t.Errorf("ts quoted %d times: %.300s", n, msg)
			}
			if strings.ContainsRune(msg, 0) || !strings.Contains(msg, "line 2") || !strings.Contains(msg, c.reason) {
				t.Errorf("error %.300q: want line 2, the reason %q, no raw NUL", msg, c.reason)
			}
		})
	}
}
