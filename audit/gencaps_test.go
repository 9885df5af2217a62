package audit_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCapsGenerated fails when caps_gen.go is not what gencaps.go writes
// today (a capability added to caps.go without `go generate`).
func TestCapsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	// Not named *.go: go run would take it for a source file.
	out := filepath.Join(t.TempDir(), "caps_gen.out")
	cmd := exec.Command("go", "run", "gencaps.go", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gencaps.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("caps_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("caps_gen.go differs from what gencaps.go writes: run go generate ./audit/")
	}
}
