package checkpointer

import (
	"errors"
	"fmt"
)

// VersionStyle chooses how NextVersion spells channel versions.
type VersionStyle int

const (
	// VersionString is Python LangGraph's style: "%032d.<random fraction>",
	// for example "00000000000000000000000000000002.0.5488135039273248". The
	// random suffix tells forks apart; only the integer part orders versions.
	VersionString VersionStyle = iota
	// VersionInt is plain integers ("1", "2", ...), which JS LangGraph writes
	// and requires.
	VersionInt
)

// ErrInvalidVersionStyle: a saver's Options name a VersionStyle that is
// neither VersionString nor VersionInt. Every saver refuses it at
// construction rather than guess a spelling.
var ErrInvalidVersionStyle = errors.New("checkpointer: invalid version style")

// Validate refuses a style other than VersionString and VersionInt with an
// error wrapping ErrInvalidVersionStyle.
func (s VersionStyle) Validate() error {
	switch s {
	case VersionString, VersionInt:
		return nil
	}
	return fmt.Errorf("%w %d (want VersionString or VersionInt)", ErrInvalidVersionStyle, int(s))
}
