package vault

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestRedactDSN: every form of secret a DSN may hold is replaced, the
// rest kept for the operator to recognize.
func TestRedactDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://bob:hunter2secret@db:5432/app":                    "postgres://bob:xxxxx@db:5432/app",
		"postgres://bob@db/app?password=hunter2secret&sslmode=verify": "postgres://bob@db/app?password=xxxxx&sslmode=verify",
		"host=db user=bob password=hunter2secret sslmode=require":     "host=db user=bob password=xxxxx sslmode=require",
		"host=db password = hunter2secret":                            "host=db password = xxxxx",
		"host=db password='hunter2 secret' user=bob":                  "host=db password=xxxxx user=bob",
		"host=db sslpassword=hunter2secret":                           "host=db sslpassword=xxxxx",
		"mongodb://bob@h/db?password=hunter2secret&authSource=admin":  "mongodb://bob@h/db?authSource=admin&password=xxxxx",
		"redis://:hunter2secret@127.0.0.1:6379/0":                     "redis://:xxxxx@127.0.0.1:6379/0",
	} {
		if got := RedactDSN(dsn); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestOpenErrorsNeverQuoteDSNSecrets: a DSN that pgx cannot parse is
// quoted whole in pgx's error ("cannot parse `host=… password = x`"),
// which Open returned as it was (session 21 careless-user review: the CLI
// printed the password); now the secret is scrubbed from the message,
// the error still wrapping pgx's.
func TestOpenErrorsNeverQuoteDSNSecrets(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ dsn, keyDSN string }{
		{dsn: "host=127.0.0.1 port=1 user=bob password = hunter2secret sslmode=nope"},
		{dsn: "host=127.0.0.1 port=1 user=bob password='hunter2secret' sslmode=nope"},
		{dsn: "postgres://bob:hunter2secret@127.0.0.1:1/app?sslmode=nope"},
		{dsn: "postgres://bob@127.0.0.1:1/app?password=hunter2secret&sslmode=nope"},
		{keyDSN: "host=127.0.0.1 port=1 user=keys password = hunter2secret sslmode=nope"},
	} {
		c := config.Default()
		c.Keys.Primary = testkeys.Key
		c.DSN = tc.dsn
		if tc.dsn == "" {
			c.DBPath = filepath.Join(t.TempDir(), "agent.db")
			c.Subjects.ThreadSeparator = ":"
			c.KeyDSN = tc.keyDSN
		}
		h, err := Open(ctx, c)
		if err == nil {
			h.Close()
			t.Fatalf("Open(%q, %q) succeeded", tc.dsn, tc.keyDSN)
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q, %q) = %q: the password is in the message", tc.dsn, tc.keyDSN, err)
		}
		if errors.Unwrap(err) == nil {
			t.Errorf("Open(%q, %q) = %q wraps nothing", tc.dsn, tc.keyDSN, err)
		}
	}
}

// TestScrubShortSecret: a secret shorter than minPiece is replaced where
// it stands alone, not inside words (before: a one-letter password "a"
// turned "cannot parse" into "cxxxxxnnot pxxxxxrse", telling the letter).
func TestScrubShortSecret(t *testing.T) {
	for _, tc := range []struct{ dsn, msg, want string }{
		{"host=db password=a", "cannot parse `host=db password=a`: failed", "cannot parse `host=db password=xxxxx`: failed"},
		{"host=db password=a", "dial db: password a was refused", "dial db: password xxxxx was refused"},
		{"postgres://bob:!@db/app", "cannot parse \"postgres://bob:!@db/app\": bad", "cannot parse \"postgres://bob:xxxxx@db/app\": bad"},
		{"host=db password=ab", "a abc ab-cd", "a abc xxxxx-cd"},
	} {
		got := ScrubSecrets(errors.New(tc.msg), tc.dsn).Error()
		if got != tc.want {
			t.Errorf("ScrubSecrets(%q, %q) = %q, want %q", tc.msg, tc.dsn, got, tc.want)
		}
	}
}

// TestRedactKeywordValues: a libpq value runs to the next keyword when
// unquoted (libpq would refuse the words between, and pgx quotes the
// string whole), to its closing quote when quoted, escapes included.
func TestRedactKeywordValues(t *testing.T) {
	for dsn, want := range map[string]string{
		`password=a b c host=x`:                 `password=xxxxx host=x`,
		`password="hunter2 tail" sslmode=x`:     `password=xxxxx sslmode=x`,
		`password='it\'s here' user=bob`:        `password=xxxxx user=bob`,
		`password=x\ y user=bob`:                `password=xxxxx user=bob`,
		`host=db password=`:                     `host=db password=`,
		`user=bob password = s1 sslpassword=s2`: `user=bob password = xxxxx sslpassword=xxxxx`,
	} {
		if got := RedactDSN(dsn); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestHandleScrubSecrets: an error met after Open (a saver's, a store's, a
// Forget's on its way to a receipt or the inspector's error page) loses the
// secrets of the DSN the handle was opened with, and still wraps what it
// wrapped. The server here trusts local connections, so the password in the
// DSN is sent and ignored: the handle opens with it as a deployment's would.
func TestHandleScrubSecrets(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	const password = "s3cret-Pa55word"
	u.User = url.UserPassword(u.User.Username(), password)
	h, err := Open(ctx, config.Config{DSN: u.String(), Encryption: config.EncryptionOff})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	driverErr := fmt.Errorf("cannot use %s: %w", u.String(), checkpointer.ErrInvalidID)
	got := h.ScrubSecrets(driverErr)
	if strings.Contains(got.Error(), password) {
		t.Fatalf("scrubbed error still holds the password: %v", got)
	}
	if !errors.Is(got, checkpointer.ErrInvalidID) {
		t.Fatalf("scrubbed error lost what it wrapped: %v", got)
	}
	if clean := errors.New("no secret here"); h.ScrubSecrets(clean) != clean {
		t.Fatalf("an error without a secret was rewrapped")
	}
}

// TestScrubPasswordWithURLDelimiter: a URL whose password holds an
// unescaped "#", "/" or "?" is refused by net/url, which quotes the URL up
// to that character; the part of the password before it is a secret too
// (session 24 review: 'invalid port ":s3cretpart" after host' was printed).
func TestScrubPasswordWithURLDelimiter(t *testing.T) {
	for _, sep := range []string{"#", "/", "?"} {
		dsn := "redis://:s3cretpart" + sep + "tailsecret@127.0.0.1:1/0"
		_, perr := url.Parse(dsn)
		if perr == nil {
			t.Fatalf("control: net/url parsed %q", dsn)
		}
		got := ScrubSecrets(fmt.Errorf("redis: %w", perr), dsn).Error()
		if strings.Contains(got, "s3cretpart") || strings.Contains(got, "tailsecret") {
			t.Errorf("%s: %q", dsn, got)
		}
	}
}
