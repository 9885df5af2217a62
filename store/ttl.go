package store

import (
	"time"
)

// DefaultSweepInterval is how often stores delete expired items when
// TTLConfig.SweepInterval is 0 (LangGraph's default).
const DefaultSweepInterval = 5 * time.Minute

// SweepEvery resolves the config's interval: DefaultSweepInterval for 0,
// and 0 (disabled) for a negative interval.
func (c TTLConfig) SweepEvery() time.Duration {
	switch {
	case c.SweepInterval == 0:
		return DefaultSweepInterval
	case c.SweepInterval < 0:
		return 0
	}
	return c.SweepInterval
}
