package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// TestEncodeMetadataDepth: the depth limit counts objects and arrays, not
// brackets inside strings (escaped quotes included), so text full of
// brackets is accepted and real nesting one level past the limit is not.
func TestEncodeMetadataDepth(t *testing.T) {
	brackets := strings.Repeat(`{[\"`, 2*checkpointer.MaxMetadataDepth)
	if _, err := core.EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"s": brackets, "k" + brackets: []any{brackets}}); err != nil {
		t.Fatalf("brackets in strings: %v", err)
	}
	nest := func(n int) any {
		var v any = `"]}`
		for range n {
			v = []any{v}
		}
		return v
	}
	if _, err := core.EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"v": nest(checkpointer.MaxMetadataDepth - 1)}); err != nil {
		t.Fatalf("%d levels: %v", checkpointer.MaxMetadataDepth, err)
	}
	if _, err := core.EncodeMetadata(checkpointer.Config{}, checkpointer.Metadata{"v": nest(checkpointer.MaxMetadataDepth)}); !errors.Is(err, checkpointer.ErrInvalidMetadata) {
		t.Fatalf("%d levels: %v, want ErrInvalidMetadata", checkpointer.MaxMetadataDepth+1, err)
	}
}
