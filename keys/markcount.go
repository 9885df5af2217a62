package keys

import (
	"regexp"
	"strconv"
)

// markCount is the one spelling of a count the data database's marks
// hold: decimal digits, no sign, no leading zero, at most 18 of them (so
// that every database's integer type holds it).
var markCount = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})$`)

// ParseMarkCount returns the count a mark's value spells, and false when
// it spells none: a value edited by hand, reformatted by a tool ("1.0",
// "+1", " 1") or out of range. The guards refuse a write whose subject's
// mark is not a count, and the marks' writers replace such a value.
func ParseMarkCount(value string) (int64, bool) {
	if !markCount.MatchString(value) {
		return 0, false
	}
	n, err := strconv.ParseInt(value, 10, 64)
	return n, err == nil
}

// ErasedPastMark reports whether value, the data database's mark
// ErasedSubjectMark(subject), refuses a write by a process whose key
// table counts known erasures of the subject: it counts more than known,
// or it is not a count (closed, as the SQL guards are).
func ErasedPastMark(value string, known int64) bool {
	n, ok := ParseMarkCount(value)
	return !ok || n > known
}
