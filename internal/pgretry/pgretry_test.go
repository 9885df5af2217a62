package pgretry

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestDo(t *testing.T) {
	deadlock := fmt.Errorf("put: %w", &pgconn.PgError{Code: "40P01"})
	calls := 0
	err := Do(context.Background(), func() error {
		calls++
		if calls < 3 {
			return deadlock
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Do = %v after %d calls, want success at the third", err, calls)
	}
	calls = 0
	err = Do(context.Background(), func() error { calls++; return deadlock })
	if !errors.Is(err, deadlock) || calls != Attempts {
		t.Fatalf("Do = %v after %d calls, want the deadlock after %d", err, calls, Attempts)
	}
	other := errors.New("syntax error")
	calls = 0
	if err := Do(context.Background(), func() error { calls++; return other }); err != other || calls != 1 {
		t.Fatalf("Do = %v after %d calls, want the error at once", err, calls)
	}
	if !Retryable(&pgconn.PgError{Code: "40001"}) || Retryable(&pgconn.PgError{Code: "23505"}) || Retryable(nil) {
		t.Fatal("Retryable misclassifies")
	}
}
