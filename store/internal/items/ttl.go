package items

import (
	"fmt"
	"math"
	"time"

	"github.com/memvault/memvault/store"
)

// TTLMinutes is the whole number of minutes a TTL is kept as for refreshes
// (LangGraph's ttl_minutes INT column): d rounded to the nearest minute,
// ties to even as PostgreSQL casts a float to an integer, but at least 1 for
// any positive d so that a refresh never expires an item at once. It is 0
// for d <= 0.
func TTLMinutes(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	m := math.RoundToEven(d.Minutes())
	if m < 1 {
		return 1
	}
	if m > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(m)
}

// RefreshTTL is the TTL a refresh-on-read applies for an item stored with
// ttlMinutes: expires_at = now + ttl_minutes minutes.
func RefreshTTL(ttlMinutes int) time.Duration {
	return time.Duration(ttlMinutes) * time.Minute
}

// ResolveTTL returns the TTL of a put: the put's own (opt) or else the
// config's default. It fails with ErrNoTTL when a TTL is asked of a store
// without TTLConfig, and with ErrInvalidArgument for a negative TTL.
func ResolveTTL(cfg *store.TTLConfig, opt *time.Duration) (time.Duration, error) {
	if opt == nil {
		if cfg == nil {
			return 0, nil
		}
		if cfg.DefaultTTL < 0 {
			return 0, fmt.Errorf("%w: negative default store.TTL %v", store.ErrInvalidArgument, cfg.DefaultTTL)
		}
		return cfg.DefaultTTL, nil
	}
	d := *opt
	if d < 0 {
		return 0, fmt.Errorf("%w: negative store.TTL %v", store.ErrInvalidArgument, d)
	}
	if d > 0 && cfg == nil {
		return 0, fmt.Errorf("%w: store.WithTTL(%v)", store.ErrNoTTL, d)
	}
	return d, nil
}

// Expired reports whether an item expiring at expiresAt (zero: never) is
// expired at now. An item is expired from its expiry instant on, as
// "expires_at > NOW()" keeps it in LangGraph's omit_expired reads.
func Expired(expiresAt, now time.Time) bool {
	return !expiresAt.IsZero() && !now.Before(expiresAt)
}
