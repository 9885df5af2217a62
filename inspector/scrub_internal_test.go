package inspector

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/vault"
)

// TestErrorPageScrubsDSN: an error page never shows the password of the
// DSN the inspector's handle was opened with, whatever error quotes it (a
// driver's message naming its connection string).
func TestErrorPageScrubsDSN(t *testing.T) {
	u, err := url.Parse(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	const password = "inspector-Pa55word"
	u.User = url.UserPassword(u.User.Username(), password)
	h, err := vault.Open(context.Background(), config.Config{DSN: u.String(), Encryption: config.EncryptionOff})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	in, err := New(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	in.fail(rec, httptest.NewRequest("GET", "/threads", nil), fmt.Errorf("connect %s: connection refused", u.String()))
	body := rec.Body.String()
	if strings.Contains(body, password) {
		t.Fatalf("error page shows the DSN's password:\n%s", body)
	}
	if rec.Code != 500 || !strings.Contains(body, "connection refused") {
		t.Fatalf("status %d, body lacks the error:\n%s", rec.Code, body)
	}
}
