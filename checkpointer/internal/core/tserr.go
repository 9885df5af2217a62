package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/internal/idlimit"
)

// BadTS says why a checkpoint's ts field is not an RFC 3339 time: the
// value named once and bounded (idlimit.Name: Go-quoted, or by its length
// when long or full of control bytes), then the reason of err, time.Parse's
// error, without the text it quotes. time.ParseError's own message quotes
// the whole value and again the part it stopped at (or the extra text), so
// a hostile 16 MiB ts came back twice in full.
func BadTS(ts string, err error) string {
	return idlimit.Name("ts", ts) + " is not an RFC 3339 time: " + parseReason(err)
}

// parseReason is a time.Parse error's reason, naming the place by byte
// offset instead of quoting the value.
func parseReason(err error) string {
	var pe *time.ParseError
	if !errors.As(err, &pe) {
		return "unparsable"
	}
	at := len(pe.Value) - len(pe.ValueElem)
	switch {
	case strings.HasPrefix(pe.Message, ": extra text"):
		return fmt.Sprintf("extra text at byte %d", at)
	case pe.Message != "":
		return strings.TrimPrefix(pe.Message, ": ")
	case pe.LayoutElem == "":
		return fmt.Sprintf("unparsable at byte %d", at)
	default:
		// LayoutElem is a piece of the layout, never of the value.
		return fmt.Sprintf("cannot parse byte %d as %s", at, strconv.Quote(pe.LayoutElem))
	}
}
