package config

import (
	"errors"
	"fmt"
)

// ErrInvalidSetting is wrapped by every error about a setting that holds a
// value it cannot take: a malformed boolean, number, duration or name.
var ErrInvalidSetting = errors.New("config: invalid setting")

// ErrMissingSetting is wrapped by every error about a setting that needs
// another one that is not set: encryption or the audit trail without a
// key, no database.
var ErrMissingSetting = errors.New("config: missing setting")

// settingError keeps the message an operator reads ("config:
// MEMVAULT_X=…: want …") and lets callers match its kind with errors.Is,
// as well as any cause the message wraps.
type settingError struct {
	kind error
	err  error
}

func (e *settingError) Error() string   { return e.err.Error() }
func (e *settingError) Unwrap() []error { return []error{e.kind, e.err} }

// invalidf is an ErrInvalidSetting error; format may wrap a cause with %w.
func invalidf(format string, args ...any) error {
	return &settingError{kind: ErrInvalidSetting, err: fmt.Errorf(format, args...)}
}

// missingf is an ErrMissingSetting error; format may wrap a cause with %w.
func missingf(format string, args ...any) error {
	return &settingError{kind: ErrMissingSetting, err: fmt.Errorf(format, args...)}
}
