package serde_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/serde"
)

// s29Row is a registered struct whose fields a stored value may not fit.
type s29Row struct {
	Small  int8           `json:"small"`
	Counts map[int]string `json:"counts"`
	At     any            `json:"at"`
}

func init() { serde.Register[s29Row]("s29.models.Row") }

// TestReviewS29DecodeErrorsCarryNoValue (session 29 review): a stored value
// that does not fit its registered Go type — a number too big for the
// field, a map key that is no number, a datetime Python would not write —
// fails its load; the error named the decoded value ("4111111111111111
// overflows int8", "key \"carol's secret\"", "bad isoformat datetime
// \"…\""): plaintext once decrypted, bound for logs. It now names types,
// fields and lengths only.
func TestReviewS29DecodeErrorsCarryNoValue(t *testing.T) {
	const secret = "4111111111111111"
	for name, kwargs := range map[string]string{
		"overflow":       `{"small": ` + secret + `}`,
		"float overflow": `{"small": ` + secret + `.5}`,
		"map key":        `{"counts": {"carol ` + secret + `": "x"}}`,
		"datetime":       `{"at": {"lc":2,"type":"constructor","id":["datetime","datetime"],"method":"fromisoformat","args":["` + secret + `"],"kwargs":{}}}`,
		"number":         `{"small": 1e` + secret + `}`,
	} {
		data := `{"lc":2,"type":"constructor","id":["s29","models","Row"],"method":null,"args":[],"kwargs":` + kwargs + `}`
		_, err := serde.JSONPlus{}.LoadsTyped("json", []byte(data))
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error carries the stored value: %v", name, err)
		}
	}
}
