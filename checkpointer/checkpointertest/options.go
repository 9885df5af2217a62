package checkpointertest

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// OpenFunc builds a saver through a backend's own constructor (memsaver.New,
// sqlitesaver.Open or sqlitesaver.New, pgsaver.New) with the given VersionStyle and
// Retention options and no other change, returning what the constructor
// returns. The saver, when there is one, is closed by RunOptions if it
// implements io.Closer.
type OpenFunc func(t *testing.T, style checkpointer.VersionStyle, retention checkpointer.RetentionPolicy) (checkpointer.Saver, error)

// RunOptions checks that a backend's constructor refuses the options every
// saver shares alike: an unknown VersionStyle with an error wrapping
// checkpointer.ErrInvalidVersionStyle, a retention policy with a negative
// field with one wrapping checkpointer.ErrInvalidPolicy, and accepts the
// valid ones. A saver built from options it cannot honour would spell
// versions no other saver reads, or sweep by a rule nobody asked for, so
// the refusal comes at construction, before any data is touched.
func RunOptions(t *testing.T, open OpenFunc) {
	build := func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy) (checkpointer.Saver, error) {
		t.Helper()
		sv, err := open(t, style, p)
		if c, ok := sv.(io.Closer); ok && err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
		return sv, err
	}
	t.Run("valid", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			style checkpointer.VersionStyle
			p     checkpointer.RetentionPolicy
		}{
			{"string_versions", checkpointer.VersionString, checkpointer.RetentionPolicy{}},
			{"int_versions", checkpointer.VersionInt, checkpointer.RetentionPolicy{}},
			{"retention", checkpointer.VersionString, checkpointer.RetentionPolicy{IdleTTL: time.Hour, KeepLatest: 3}},
		} {
			t.Run(c.name, func(t *testing.T) {
				sv, err := build(t, c.style, c.p)
				if err != nil {
					t.Fatalf("style %d, IdleTTL %v, KeepLatest %d: %v", c.style, c.p.IdleTTL, c.p.KeepLatest, err)
				}
				if sv == nil {
					t.Fatal("nil saver without an error")
				}
				want := "1"
				if c.style == checkpointer.VersionString {
					want = "00000000000000000000000000000001."
				}
				if v := sv.NextVersion(""); len(v) < len(want) || v[:len(want)] != want {
					t.Fatalf("NextVersion(\"\") = %q in style %d, want it to start with %q", v, c.style, want)
				}
			})
		}
	})
	refused := func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy, sentinel error) {
		t.Helper()
		if _, err := build(t, style, p); !errors.Is(err, sentinel) {
			t.Fatalf("style %d, IdleTTL %v, KeepLatest %d: err = %v, want one wrapping %v", style, p.IdleTTL, p.KeepLatest, err, sentinel)
		}
	}
	t.Run("unknown_version_style", func(t *testing.T) {
		for _, style := range []checkpointer.VersionStyle{checkpointer.VersionInt + 1, -1} {
			refused(t, style, checkpointer.RetentionPolicy{}, checkpointer.ErrInvalidVersionStyle)
		}
	})
	t.Run("negative_idle_ttl", func(t *testing.T) {
		refused(t, checkpointer.VersionString, checkpointer.RetentionPolicy{IdleTTL: -time.Second}, checkpointer.ErrInvalidPolicy)
	})
	t.Run("negative_keep_latest", func(t *testing.T) {
		refused(t, checkpointer.VersionString, checkpointer.RetentionPolicy{KeepLatest: -1}, checkpointer.ErrInvalidPolicy)
	})
}
