package pgsaver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestBackgroundSweep(t *testing.T) {
	checkpointertest.RunBackgroundSweep(t, func(t *testing.T, p checkpointer.RetentionPolicy, every time.Duration, on func(checkpointer.SweepReport, error)) (checkpointer.Saver, func() error) {
		s, _ := newSaver(t, pgsaver.Options{Retention: p, SweepInterval: every, OnSweep: on})
		return s, s.Close
	})
}

func TestRetentionOptionRefused(t *testing.T) {
	_, err := pgsaver.New(pgtest.Pool(t), pgsaver.Options{Retention: checkpointer.RetentionPolicy{IdleTTL: -time.Hour}})
	if !errors.Is(err, checkpointer.ErrInvalidPolicy) {
		t.Fatalf("New with IdleTTL -1h = %v, want ErrInvalidPolicy", err)
	}
}
