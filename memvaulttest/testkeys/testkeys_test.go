package testkeys_test

import (
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
)

func TestEncryptingSeals(t *testing.T) {
	e := testkeys.Encrypting(t)
	typ, data, err := e.DumpsTyped("secret")
	if err != nil {
		t.Fatal(err)
	}
	if typ == "json" || string(data) == `"secret"` {
		t.Fatalf("not sealed: %s %q", typ, data)
	}
}
