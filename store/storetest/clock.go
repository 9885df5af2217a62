package storetest

import (
	"sync"
	"time"
)

// Epoch is the time a new Clock starts at.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a fake clock the suite advances by hand. It is safe for
// concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to Epoch.
func NewClock() *Clock { return &Clock{now: Epoch} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
