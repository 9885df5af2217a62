package vault

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// redacted replaces each secret a DSN holds in messages.
const redacted = "xxxxx"

// secretKey tells the names of DSN options that hold secrets: password
// (libpq's password and sslpassword, MongoDB's and Redis's password query
// options), and anything named like a secret or a token.
var secretKey = regexp.MustCompile(`(?i)pass|pwd|secret|token`)

// keywordSecret matches a libpq keyword/value pair whose keyword names a
// secret: `password=x`, `password = 'x y'` (spaces around "=" allowed,
// single quotes with backslash escapes).
var keywordSecret = regexp.MustCompile(`(?i)\b(\w*(?:pass|pwd|secret|token)\w*)(\s*=\s*)('(?:\\.|[^'\\])*'|[^\s']\S*)`)

// RedactDSN returns dsn with every secret it holds replaced by "xxxxx",
// for messages: a URL's user password and its secret query options
// (password=, sslpassword=, …), or a libpq keyword/value string's
// password = … pairs.
func RedactDSN(dsn string) string {
	if DSNScheme(dsn) == "" {
		return keywordSecret.ReplaceAllString(dsn, "${1}${2}"+redacted)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return DSNScheme(dsn) + "://…"
	}
	q := u.Query()
	changed := false
	for k := range q {
		if secretKey.MatchString(k) {
			q[k] = []string{redacted}
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// dsnSecrets returns the secrets dsn holds (see RedactDSN), longest first.
func dsnSecrets(dsn string) []string {
	var out []string
	if DSNScheme(dsn) == "" {
		for _, m := range keywordSecret.FindAllStringSubmatch(dsn, -1) {
			v := m[3]
			if strings.HasPrefix(v, "'") {
				out = append(out, v, strings.ReplaceAll(strings.Trim(v, "'"), `\'`, `'`))
			} else {
				out = append(out, v)
			}
		}
	} else if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
		}
		for k, vs := range u.Query() {
			if secretKey.MatchString(k) {
				for _, v := range vs {
					out = append(out, v, url.QueryEscape(v))
				}
			}
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// scrubbedError is an error whose message had a DSN's secrets replaced;
// it still wraps the original (errors.Is and As see it).
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// ScrubSecrets returns err with every secret of the dsns replaced in its
// message (see RedactDSN), still wrapping err: drivers quote a DSN they
// cannot parse or use whole (pgx's "cannot parse `host=… password = x`",
// MongoDB's and go-redis's option errors), and the message reaches logs
// and terminals. Open applies it to its errors; a program that connects
// with a DSN itself applies it to its own.
func ScrubSecrets(err error, dsns ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	scrubbed := msg
	for _, dsn := range dsns {
		if dsn == "" {
			continue
		}
		scrubbed = strings.ReplaceAll(scrubbed, dsn, RedactDSN(dsn))
		for _, s := range dsnSecrets(dsn) {
			scrubbed = strings.ReplaceAll(scrubbed, s, redacted)
		}
	}
	if scrubbed == msg {
		return err
	}
	return &scrubbedError{msg: scrubbed, err: err}
}
