package demoenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
)

// TestCheckCatchesPlaintext: a demo that writes its secret in the clear
// fails the check.
func TestCheckCatchesPlaintext(t *testing.T) {
	inner := &testing.T{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(inner, "x.db", func(_ context.Context, w io.Writer, path string) error {
			fmt.Fprintln(w, "ok")
			return os.WriteFile(path, []byte("card 4242"), 0o600)
		}, []string{"ok"}, "4242")
	}()
	<-done
	if !inner.Failed() {
		t.Fatal("plaintext in the file passed the check")
	}
}
