package checks

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func TestValidatePut(t *testing.T) {
	cp := &checkpointer.Checkpoint{ID: "id"}
	for _, tc := range []struct {
		cfg  checkpointer.Config
		cp   *checkpointer.Checkpoint
		want error
	}{
		{checkpointer.Config{ThreadID: "t"}, cp, nil},
		{checkpointer.Config{}, cp, checkpointer.ErrMissingThreadID},
		{checkpointer.Config{ThreadID: "t"}, nil, checkpointer.ErrNilCheckpoint},
		{checkpointer.Config{}, nil, checkpointer.ErrMissingThreadID},
		{checkpointer.Config{ThreadID: "t"}, &checkpointer.Checkpoint{}, checkpointer.ErrInvalidCheckpoint},
	} {
		if err := ValidatePut(tc.cfg, tc.cp, nil); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("ValidatePut(%+v, %v) = %v, want %v", tc.cfg, tc.cp, err, tc.want)
		}
	}
}

func TestValidatePutWrites(t *testing.T) {
	for _, tc := range []struct {
		cfg  checkpointer.Config
		want error
	}{
		{checkpointer.Config{ThreadID: "t", CheckpointID: "c"}, nil},
		{checkpointer.Config{CheckpointID: "c"}, checkpointer.ErrMissingThreadID},
		{checkpointer.Config{ThreadID: "t"}, checkpointer.ErrMissingCheckpointID},
	} {
		cfg, want := tc.cfg, tc.want
		if err := ValidatePutWrites(cfg, nil, "task", ""); !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("ValidatePutWrites(%+v) = %v, want %v", cfg, err, want)
		}
	}
}
