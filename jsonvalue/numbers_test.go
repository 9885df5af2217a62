package jsonvalue_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
)

// TestRefusedNumbers: every literal the suites hold refused is refused by
// the model, alone and nested, with ErrUnsupported and no digit of it in
// the error (errors reach logs; the number is the value).
func TestRefusedNumbers(t *testing.T) {
	for name, n := range jsonvaluetest.RefusedNumbers() {
		for shape, v := range map[string]any{"alone": n, "nested": map[string]any{"l": []any{int64(1), n}}} {
			_, err := jsonvalue.Canonical(v)
			if !errors.Is(err, jsonvalue.ErrUnsupported) {
				t.Errorf("%s %s: Canonical: %v, want ErrUnsupported", name, shape, err)
			} else if strings.Contains(err.Error(), jsonvaluetest.SecretDigits) {
				t.Errorf("%s %s: error shows the number: %v", name, shape, err)
			}
			if _, err := jsonvalue.Marshal(v); !errors.Is(err, jsonvalue.ErrUnsupported) {
				t.Errorf("%s %s: Marshal: %v, want ErrUnsupported", name, shape, err)
			}
		}
	}
}
