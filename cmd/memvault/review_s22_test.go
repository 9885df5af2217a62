package main

import (
	"strings"
	"testing"
)

// TestReviewS22DSNSecretsNeverPrinted (session 22 review): DSNs whose
// secret the session 21 scrubbing (vault.ScrubSecrets, RedactDSN) misses.
// Each is a DSN an operator writes: a libpq value with a backslash escape
// (libpq and pgx read "\ " and "\'" inside a value; pgx's own redaction
// stops at the escape and ScrubSecrets looks for the whole value only), a
// Redis URL whose password net/url refuses (its error quotes the URL with
// %q, and dsnSecrets finds nothing in a URL it cannot parse), and a MongoDB
// AWS session token (authMechanismProperties is not named like a secret).
func TestReviewS22DSNSecretsNeverPrinted(t *testing.T) {
	for _, tc := range []struct{ dsn, secret string }{
		{`host=127.0.0.1 port=1 user=bob password=hunter2\ tailsecret sslmode=nope`, "tailsecret"},
		{`host=127.0.0.1 port=1 user=bob password='hunter2\' tailsecret' sslmode=nope`, "tailsecret"},
		{`redis://:hunter2"secret@127.0.0.1:1/0`, "secret"},
		{`redis://:hunter2\secret@127.0.0.1:1/0`, "secret"},
		{"mongodb://bob@127.0.0.1:1/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok3nsecret", "tok3nsecret"},
	} {
		for _, args := range [][]string{
			{"--dsn", tc.dsn, "threads", "list"},
			{"--json", "--dsn", tc.dsn, "bench", "checkpointer", "--duration", "1s"},
		} {
			r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", args...)
			if r.code == 0 {
				t.Errorf("%q %v: exit 0", tc.dsn, args[len(args)-2:])
			}
			if strings.Contains(r.stdout+r.stderr, tc.secret) {
				t.Errorf("%q %v: the secret %q is printed:\n%s", tc.dsn, args[len(args)-2:], tc.secret, r.stderr)
			}
		}
	}
	// The same through the environment (MEMVAULT_KEY_DSN is quoted by the
	// unreachable-key-DSN message with RedactDSN).
	env := append(sqliteEnv(t), "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:",
		`MEMVAULT_KEY_DSN=host=127.0.0.1 port=1 user=keys password=hunter2\ tailsecret sslmode=disable connect_timeout=1`)
	r := cli(t, env, "", "threads", "list")
	if r.code == 0 || strings.Contains(r.stdout+r.stderr, "tailsecret") {
		t.Errorf("MEMVAULT_KEY_DSN: exit %d, printed:\n%s", r.code, r.stderr)
	}
}
