package vault

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// redacted replaces each secret a DSN holds in messages.
const redacted = "xxxxx"

// secretKey tells the names of DSN options that hold secrets: password
// (libpq's password and sslpassword, MongoDB's and Redis's password query
// options), anything named like a secret or a token, and MongoDB's
// authMechanismProperties (an AWS session token).
var secretKey = regexp.MustCompile(`(?i)pass|pwd|secret|token|authmechanismproperties`)

// secretKeyword matches a libpq keyword naming a secret and its "="
// (spaces around it allowed); keywordValue finds the value after it.
var secretKeyword = regexp.MustCompile(`(?i)\b\w*(?:pass|pwd|secret|token)\w*\s*=\s*`)

// keywordSecrets returns the [start, end) spans of the values of a libpq
// keyword/value string's secret keywords: `password=x`, `password = 'x
// y'`, `password=x\ y` (backslash escapes, quoted or not, as libpq reads
// them). An unquoted value runs on over the words after it that hold no
// "=": libpq refuses `password=x y` or `password="x y"` (shells and YAML
// teach double quotes), and pgx then quotes the whole string, the
// password's later words included.
func keywordSecrets(dsn string) [][2]int {
	var spans [][2]int
	for _, m := range secretKeyword.FindAllStringIndex(dsn, -1) {
		start := m[1]
		if start == len(dsn) || (len(spans) > 0 && m[0] < spans[len(spans)-1][1]) {
			continue
		}
		end := start
		if dsn[start] == '\'' {
			end = scanWord(dsn, start+1, true)
			if end < len(dsn) {
				end++ // the closing quote
			}
		} else {
			end = scanWord(dsn, start, false)
			for {
				next := end
				for next < len(dsn) && isSpace(dsn[next]) {
					next++
				}
				if next == end || next == len(dsn) {
					break
				}
				w := scanWord(dsn, next, false)
				if strings.Contains(dsn[next:w], "=") {
					break
				}
				end = w
			}
		}
		spans = append(spans, [2]int{start, end})
	}
	return spans
}

// scanWord returns the end of the word of s at i: up to a space, or in
// quotes up to the closing quote; a backslash escapes the byte after it.
func scanWord(s string, i int, quoted bool) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i += 2
			continue
		case quoted && c == '\'':
			return i
		case !quoted && isSpace(c):
			return i
		}
		i++
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// backslashEscape is one backslash escape of a libpq value.
var backslashEscape = regexp.MustCompile(`\\(.)`)

// minPiece is the shortest part of a secret ScrubSecrets replaces alone:
// a driver that redacts a value up to its first space prints the rest,
// but replacing every "a" of a message would garble it and tell the
// secret's letters.
const minPiece = 3

// RedactDSN returns dsn with every secret it holds replaced by "xxxxx",
// for messages: a URL's user password and its secret query options
// (password=, sslpassword=, …), or a libpq keyword/value string's
// password = … pairs.
func RedactDSN(dsn string) string {
	if DSNScheme(dsn) == "" {
		var b strings.Builder
		last := 0
		for _, sp := range keywordSecrets(dsn) {
			b.WriteString(dsn[last:sp[0]])
			b.WriteString(redacted)
			last = sp[1]
		}
		b.WriteString(dsn[last:])
		return b.String()
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

// dsnSecrets returns the secrets dsn holds (see RedactDSN), longest
// first: each as written, unescaped, quoted as Go's %q quotes it, and its
// space-separated pieces (drivers redact a value up to its first space).
func dsnSecrets(dsn string) []string {
	dsn = strings.TrimSpace(dsn)
	var found []string
	if DSNScheme(dsn) == "" {
		for _, sp := range keywordSecrets(dsn) {
			v := dsn[sp[0]:sp[1]]
			found = append(found, v, backslashEscape.ReplaceAllString(strings.Trim(v, "'"), "$1"))
		}
	} else if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok {
			found = append(found, p, url.QueryEscape(p), url.PathEscape(p))
		}
		for k, vs := range u.Query() {
			if secretKey.MatchString(k) {
				for _, v := range vs {
					found = append(found, v, url.QueryEscape(v))
				}
			}
		}
	} else if p := userinfoPassword(dsn); p != "" {
		// A URL net/url refuses, and quotes whole in its error — or, when
		// the password holds an unescaped "#", "/" or "?" (generated
		// passwords do), up to that character only: each part is a
		// secret of its own.
		found = append(found, p)
		found = append(found, strings.FieldsFunc(p, func(r rune) bool { return r == '#' || r == '/' || r == '?' })...)
	}
	var out []string
	for _, s := range found {
		out = append(out, s, strings.Trim(strconv.Quote(s), `"`))
		for _, piece := range strings.Fields(s) {
			if len(piece) >= minPiece {
				out = append(out, piece, strings.Trim(strconv.Quote(piece), `"`))
			}
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// userinfoPassword returns the password of a URL's userinfo found by
// hand, for a URL net/url refuses: what follows the first ":" of what
// precedes the last "@". At worst it takes more than the password, which
// only hides more of a message.
func userinfoPassword(dsn string) string {
	_, rest, ok := strings.Cut(dsn, "://")
	at := strings.LastIndex(rest, "@")
	if !ok || at < 0 {
		return ""
	}
	_, pass, _ := strings.Cut(rest[:at], ":")
	return pass
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
			if len(s) < minPiece {
				scrubbed = replaceStandalone(scrubbed, s)
			} else {
				scrubbed = strings.ReplaceAll(scrubbed, s, redacted)
			}
		}
	}
	if scrubbed == msg {
		return err
	}
	return &scrubbedError{msg: scrubbed, err: err}
}

// replaceStandalone replaces the occurrences of a short secret that no
// letter or digit touches on either side: a one-letter password replaced
// everywhere would garble every word of the message holding that letter
// ("cxxxxxnnot pxxxxxrse"), and tell which letter it is.
func replaceStandalone(msg, secret string) string {
	var b strings.Builder
	rest := msg
	for {
		i := strings.Index(rest, secret)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		end := i + len(secret)
		before := len(msg) - len(rest) + i
		if !alnumAt(msg, before-1) && !alnumAt(msg, before+len(secret)) {
			b.WriteString(rest[:i])
			b.WriteString(redacted)
		} else {
			b.WriteString(rest[:end])
		}
		rest = rest[end:]
	}
}

// alnumAt reports whether s has an ASCII letter or digit at byte i.
func alnumAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
