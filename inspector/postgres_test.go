package inspector_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestPostgres: the inspector on PostgreSQL (pgvector), as `memvault
// inspect --dsn` serves it: a decrypted value and the fork, a semantic
// search with scores, the census and a verified trail.
func TestPostgres(t *testing.T) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{
		"MEMVAULT_DSN":         pgtest.SchemaDSN(t),
		"MEMVAULT_AUDIT_TABLE": "inspector_audit_" + hex.EncodeToString(b),
	})
	if f.h.Backend != "postgres" {
		t.Fatalf("backend %q", f.h.Backend)
	}
	srv, token := f.server(t)
	c := login(t, srv, token)
	_, body := get(t, c, srv.URL+"/thread?id="+url.QueryEscape(thread)+"&cp="+f.fork+"&cpns=")
	if !strings.Contains(body, secretPhrase) || !strings.Contains(body, "fork: 2 branches") {
		t.Errorf("thread page on PostgreSQL lacks the value or the fork")
	}
	_, body = get(t, c, srv.URL+"/memories?ns=users&q="+url.QueryEscape("allergic to nuts"))
	if !strings.Contains(body, "vegetarian, allergic to nuts") || !regexp.MustCompile(`class="num score">[0-9.-]+<`).MatchString(body) {
		t.Errorf("search on PostgreSQL lacks the item or its score")
	}
	_, body = get(t, c, srv.URL+"/keys")
	if !strings.Contains(body, "checkpoint_blobs") || !strings.Contains(body, "mvgcm") {
		t.Errorf("census on PostgreSQL: %s", body)
	}
	_, body = get(t, c, srv.URL+"/audit")
	if !strings.Contains(body, "Trail verified") {
		t.Errorf("audit on PostgreSQL not verified")
	}
	_, body = get(t, c, srv.URL+"/thread?id=hostile")
	if m := injected(body); m != "" {
		t.Errorf("markup injected on PostgreSQL: %s", m)
	}
}
