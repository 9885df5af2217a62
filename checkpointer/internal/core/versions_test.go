package core

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func TestPyFloatRepr(t *testing.T) {
	// Python's repr of floats in [0, 1), and the zero-padded suffixes of
	// reference §1.3.
	for f, want := range map[float64]string{
		0:                  "0.0",
		0.5:                "0.5",
		0.01:               "0.01",
		0.0001:             "0.0001",
		0.00001:            "1e-05",
		0.000015:           "1.5e-05",
		1e-300:             "1e-300",
		0.5488135039273248: "0.5488135039273248",
		0.1:                "0.1",
	} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

var pyVersion = regexp.MustCompile(`^[0-9]{32}\.[0-9.e+-]{16,}$`)

func TestNextVersionStringStyle(t *testing.T) {
	v := NextVersion("")
	if !pyVersion.MatchString(v) || !strings.HasPrefix(v, "00000000000000000000000000000001.") {
		t.Fatalf("NextVersion(\"\") = %q, want %%032d.<fraction> with integer part 1", v)
	}
	frac := v[33:]
	if len(frac) < 16 {
		t.Fatalf("fraction %q shorter than 16 characters", frac)
	}
	for cur, n := range map[string]string{
		v: "00000000000000000000000000000002.",
		"00000000000000000000000000000002.0000000000000.01": "00000000000000000000000000000003.",
		"00000000000000000000000000000003.000000000001e-05": "00000000000000000000000000000004.",
		"7":    "00000000000000000000000000000008.",
		"41.0": "00000000000000000000000000000042.",
		"junk": "00000000000000000000000000000001.",
	} {
		got := NextVersion(cur)
		if !strings.HasPrefix(got, n) || !pyVersion.MatchString(got) {
			t.Errorf("NextVersion(%q) = %q, want prefix %q", cur, got, n)
		}
	}
	// Consecutive versions sort as text.
	prev := ""
	for range 50 {
		next := NextVersion(prev)
		if next <= prev {
			t.Fatalf("NextVersion(%q) = %q does not sort after it", prev, next)
		}
		prev = next
	}
}

func TestNextVersionPadding(t *testing.T) {
	// The padded fraction of a short repr: zeros first, as Python's
	// f"{random.random():016}" does.
	for frac, want := range map[string]string{"0.01": "0000000000000.01", "1e-05": "000000000001e-05"} {
		got := strings.Repeat("0", 16-len(frac)) + frac
		if got != want {
			t.Fatalf("padding %q = %q, want %q", frac, got, want)
		}
	}
	for range 1000 {
		v := NextVersion("")
		if frac := v[33:]; len(frac) < 16 {
			t.Fatalf("NextVersion fraction %q shorter than 16", frac)
		}
	}
}

func TestNextVersionIntStyle(t *testing.T) {
	for cur, want := range map[string]string{"": "1", "1": "2", "9": "10", "41.0": "42", "00000000000000000000000000000002.0.5": "3", "junk": "1"} {
		if got := NextVersionStyle(checkpointer.VersionInt, cur); got != want {
			t.Errorf("NextVersionStyle(checkpointer.VersionInt, %q) = %q, want %q", cur, got, want)
		}
	}
}

func TestVersionNumber(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "7": 7, "7.0": 7, "00000000000000000000000000000007.0.25": 7, "12.000000000001e-05": 12} {
		got, err := VersionNumber(v)
		if err != nil || got != want {
			t.Errorf("VersionNumber(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, bad := range []string{"x", "-1", ".5", "1e5", "99999999999999999999999999999"} {
		if _, err := VersionNumber(bad); !errors.Is(err, checkpointer.ErrInvalidVersion) {
			t.Errorf("VersionNumber(%q) error = %v, want checkpointer.ErrInvalidVersion", bad, err)
		}
	}
}

func TestMaxVersion(t *testing.T) {
	if got := MaxVersion(); got != "" {
		t.Fatalf("MaxVersion() = %q", got)
	}
	if got := MaxVersion("2", "10", "9"); got != "10" {
		t.Fatalf("MaxVersion of ints = %q, want 10 (numeric, not text)", got)
	}
	a := "00000000000000000000000000000002.0.1"
	b := "00000000000000000000000000000002.0.9"
	c := "00000000000000000000000000000001.0.99"
	if got := MaxVersion(a, b, c); got != b {
		t.Fatalf("MaxVersion = %q, want %q", got, b)
	}
	if got := MaxVersion("junk", "1"); got != "1" {
		t.Fatalf("MaxVersion(junk, 1) = %q, want 1", got)
	}
}

func FuzzVersionNumber(f *testing.F) {
	for _, s := range []string{"", "1", "00000000000000000000000000000002.0.5", "x", "-1", "1.2.3", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := VersionNumber(v)
		if err != nil {
			if !errors.Is(err, checkpointer.ErrInvalidVersion) {
				t.Fatalf("VersionNumber(%q) error %v is not checkpointer.ErrInvalidVersion", v, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("VersionNumber(%q) = %d < 0", v, n)
		}
		if n < 1<<62 {
			next, err := VersionNumber(NextVersion(v))
			if err != nil || next != n+1 {
				t.Fatalf("NextVersion(%q) has integer part %d (%v), want %d", v, next, err, n+1)
			}
		}
	})
}
