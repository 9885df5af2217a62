package batchrow

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
)

// TestExpandHostileTimeNotEchoed: a batch whose member's time is 64 KiB of
// no time reads as tampered with, in an error naming it by length.
func TestExpandHostileTimeNotEchoed(t *testing.T) {
	rows := Split(batch(3, "a"))
	last := rows[0][2]
	last.PendingID = "a"
	huge := strings.Repeat("yesterday ", 6554)
	_, err := Expand(last, `[["`+huge+`","","","","","","",""]]`)
	if !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("Expand = %v, want ErrTampered", err)
	}
	if len(err.Error()) > 400 || strings.Contains(err.Error(), "yesterday") {
		t.Errorf("a %d-byte error echoing the time: %.200q…", len(err.Error()), err.Error())
	}
}
