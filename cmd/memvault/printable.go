package main

import (
	"strconv"
	"unicode/utf8"
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
