package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/checkpointer"
)

// printable returns s — an id, a label, a principal read from the database
// or a file — as the CLI's human output prints it: unchanged when it is
// valid UTF-8 of printable characters only and does not start with a
// double quote, else Go-quoted ("a\nb\tc"). So a newline, a tab, a
// carriage return, an escape sequence or a bidirectional-text control in
// an id cannot forge lines or columns of the output, recolour the terminal
// or reorder what it shows; and a quoted form is never mistaken for an id
// that merely looks like one. JSON output needs no such care.
func printable(s string) string {
	if s != "" && s[0] == '"' || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// idName names an identifier in human output, success lines included:
// what and the id as printable shows it, or, for an id longer than
// checkpointer.MaxIDBytes (reads, deletes and lookups take one, so that a
// thread an earlier version stored stays reachable), checkpointer.NameID's
// form — its length and the limit, never its text — so that a 64 KiB
// argument does not come back as a 64 KiB line bound for logs.
func idName(what, id string) string {
	if len(id) > checkpointer.MaxIDBytes {
		return checkpointer.NameID(what, id)
	}
	return what + " " + printable(id)
}

// errorText returns an error message as the CLI prints it for people: on
// one line, as plain text. Line breaks and tabs (pgx joins the addresses
// it tried with "\n\t") become spaces; every other character that could
// forge output — a carriage return, an escape sequence, a bidirectional
// control, a byte that is not UTF-8 — is escaped where it stands, as Go
// escapes it ("\x1b"), and the rest is left as it is. Quoting the whole
// message for one such character (as printable does for an id) printed a
// connection refused as a Go string literal.
func errorText(s string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case strconv.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r) // 'x' with x escaped
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
