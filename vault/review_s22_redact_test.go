package vault

import (
	"errors"
	"strings"
	"testing"
)

// TestReviewS22RedactDSNWholeValue (session 22 review): RedactDSN and
// ScrubSecrets hide the whole secret value. libpq (and pgx) read a
// backslash escape inside a value, "password=a\ b" holding "a b": the
// keyword regexp stops at the space and pgx's own redaction at the space
// or quote, so "b" was printed; net/url quotes a URL it refuses with %q,
// and dsnSecrets finds nothing in a URL it cannot parse; a MongoDB AWS
// session token sits in authMechanismProperties, not named like a secret.
func TestReviewS22RedactDSNWholeValue(t *testing.T) {
	for _, tc := range []struct{ dsn, driverMsg string }{
		// driverMsg: what pgx, net/url or the MongoDB driver print of it.
		{`host=db password=hunter2\ tailsecret user=bob`, "cannot parse `host=db password=xxxxx tailsecret user=bob`: failed"},
		{`host=db password='hunter2\' tailsecret' user=bob`, "cannot parse `host=db password=xxxxx tailsecret' user=bob`: failed"},
		{`redis://:hunter2"tailsecret@127.0.0.1:1/0`, `parse "redis://:hunter2\"tailsecret@127.0.0.1:1/0": net/url: invalid userinfo`},
		{"mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tailsecret", "mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tailsecret: error validating uri"},
	} {
		if got := RedactDSN(tc.dsn); strings.Contains(got, "tailsecret") {
			t.Errorf("RedactDSN(%q) = %q", tc.dsn, got)
		}
		if got := ScrubSecrets(errors.New(tc.driverMsg), tc.dsn); strings.Contains(got.Error(), "tailsecret") {
			t.Errorf("ScrubSecrets(%q, %q) = %q", tc.driverMsg, tc.dsn, got)
		}
	}
}
