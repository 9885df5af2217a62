package core

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/memvault/memvault/checkpointer"
)

// NextVersion returns the version after current in Python LangGraph's
// string style. current may be "" (no version yet), an integer, or a string
// version; an unparsable current restarts at 1.
func NextVersion(current string) string {
	return NextVersionStyle(checkpointer.VersionString, current)
}

// NextVersionStyle is NextVersion in the given style.
func NextVersionStyle(style checkpointer.VersionStyle, current string) string {
	n, err := VersionNumber(current)
	if err != nil {
		n = 0
	}
	n++
	if style == checkpointer.VersionInt {
		return strconv.FormatInt(n, 10)
	}
	frac := pyFloatRepr(rand.Float64())
	if len(frac) < 16 {
		frac = strings.Repeat("0", 16-len(frac)) + frac
	}
	return fmt.Sprintf("%032d.%s", n, frac)
}

// VersionNumber returns the integer part of a version: the text before the
// first '.', so "7", "7.0" and "000...07.0.25" are all 7; "" is 0.
func VersionNumber(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	head, _, _ := strings.Cut(v, ".")
	n, err := strconv.ParseInt(head, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %q", checkpointer.ErrInvalidVersion, v)
	}
	return n, nil
}

// MaxVersion returns the greatest of vs by integer part, then by text; ""
// when vs is empty.
func MaxVersion(vs ...string) string {
	best := ""
	var bestN int64 = -1
	for _, v := range vs {
		n, err := VersionNumber(v)
		if err != nil {
			n = -1
		}
		if n > bestN || (n == bestN && v > best) {
			best, bestN = v, n
		}
	}
	return best
}

// pyFloatRepr formats f as Python's repr does for floats in [0, 1): shortest
// round-trip digits, exponent form below 1e-4 ("1e-05").
func pyFloatRepr(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
