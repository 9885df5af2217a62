package inspector_test

import (
	"database/sql"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/memvault/memvault/inspector"
)

// TestLongIDTitlesBounded: the page of a thread an earlier version stored
// under a 64 KiB id titled itself with the id whole (<title> and <h1>: 128 KiB of page), where the errors
// name such an id by its length (TestLongIDNotEchoed). The titles name it
// by its length now.
func TestLongIDTitlesBounded(t *testing.T) {
	dir := t.TempDir()
	h := openVault(t, dir, map[string]string{"MEMVAULT_ENCRYPTION": "off", "MEMVAULT_AUDIT": "false"})
	huge := strings.Repeat("T", 64<<10)
	raw, err := sql.Open("sqlite", filepath.Join(dir, "inspect.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
		VALUES (?, '', '1f0c6a2e-2222-6000-8000-000000000001', NULL, 'json',
		'{"v":4,"id":"1f0c6a2e-2222-6000-8000-000000000001","ts":"2026-01-01T00:00:00Z","channel_values":{},"channel_versions":{},"versions_seen":{}}', '{}')`, huge); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	srv, c := writeServer(t, h, inspector.Options{Principal: func(*http.Request) string { return "inspector:alice" }})
	titles := regexp.MustCompile(`(?s)<title>([^<]*?) · memvault inspector</title>|<h1>(.*?)</h1>`)
	for _, u := range []string{"/thread?id=" + url.QueryEscape(huge)} {
		resp, body := get(t, c, srv.URL+u)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%.20s…: status %d: %.300s", u, resp.StatusCode, errorText(body))
		}
		found := titles.FindAllStringSubmatch(body, -1)
		if len(found) < 2 {
			t.Fatalf("%.20s…: no <title> and <h1> in the page", u)
		}
		for _, m := range found {
			title := m[1] + m[2]
			if len(title) > 300 || strings.Contains(title, huge[:64]) {
				t.Errorf("%.20s…: a title of %d bytes holds the id: %.200s", u, len(title), title)
			} else if !strings.Contains(title, strconv.Itoa(len(huge))+" bytes") {
				t.Errorf("%.20s…: title %q does not name the id by its length", u, title)
			}
		}
	}
}
