package pgretry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Attempts is how many times Do runs fn at most.
const Attempts = 5

// Retryable reports whether err is a deadlock or a serialization failure.
func Retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// Owned is Do when owned — fn runs a transaction of the library's own, on
// its own pool or connection — and one run of fn otherwise: a caller's
// transaction is aborted as a whole, and the caller's to retry.
func Owned(ctx context.Context, owned bool, fn func() error) error {
	if owned {
		return Do(ctx, fn)
	}
	return fn()
}

// Do runs fn until it succeeds, fails with an error that is not
// Retryable, or has run Attempts times; between attempts it waits a
// short, growing, jittered pause (so the two sides of a deadlock do not
// collide again). It returns fn's last error, unwrapped by nothing.
func Do(ctx context.Context, fn func() error) error {
	var err error
	for attempt := range Attempts {
		if err = fn(); err == nil || !Retryable(err) {
			return err
		}
		if attempt == Attempts-1 {
			break
		}
		pause := time.Duration(attempt+1) * time.Millisecond
		pause += rand.N(pause)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
	return err
}
