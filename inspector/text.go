package inspector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
)

// idName names an identifier from a request (a thread id, checkpoint id,
// namespace, memory key, channel) in an error: what and the id quoted as
// printableText shows it, or, beyond checkpointer.MaxIDBytes (the store's
// limit is the same number), checkpointer.NameID's form — its length and
// the limit, never its text. Lookups take longer ids (a thread an earlier
// version stored stays reachable), so a 64 KiB query parameter reached the
// error page, and the logs of whoever logs them, whole.
func idName(what, id string) string {
	if len(id) > checkpointer.MaxIDBytes {
		return checkpointer.NameID(what, id)
	}
	return what + " " + strconv.Quote(printableText(id))
}

// printableText returns s with what must not reach a reader raw made
// visible: invalid UTF-8 bytes as \xNN, and control, format (bidirectional
// overrides, zero-width characters) and other non-printing runes as \u{…};
// newlines and tabs stay. html/template escapes the result for HTML.
func printableText(s string) string {
	ok := utf8.ValidString(s)
	if ok {
		for _, r := range s {
			if r != '\n' && r != '\t' && !unicode.IsPrint(r) && r != ' ' {
				ok = false
				break
			}
		}
	}
	if ok {
		return s
	}
	// Escapes are appended by hand: fmt per escape allocated each time.
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '\n' || r == '\t' || r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			var digits [8]byte
			d := strconv.AppendUint(digits[:0], uint64(r), 16)
			b.WriteString(`\u{`)
			b.WriteString("000"[:max(4-len(d), 0)])
			b.Write(d)
			b.WriteByte('}')
		}
		i += size
	}
	return b.String()
}

// shown is a value rendered for a page: indented JSON, cut when long.
type shown struct {
	Text      string
	Truncated bool
	Bytes     int
}

// showValue renders v as indented JSON cut at max bytes (0: whole).
func showValue(v any, max int) shown {
	raw, err := jsonvalue.Marshal(v)
	if err != nil {
		return shown{Text: fmt.Sprintf("(cannot render: %v)", err)}
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, raw, "", "  "); err == nil {
		raw = ind.Bytes()
	}
	s := shown{Bytes: len(raw)}
	if max > 0 && len(raw) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut]
		s.Truncated = true
	}
	s.Text = printableText(string(raw))
	return s
}

// when formats t for a page (UTC, seconds); "" for the zero time.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
