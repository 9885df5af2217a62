package adkv2_test

import (
	"os/exec"
	"testing"
)

// The ADK v2 adapter is the v1 adapter's source with v2's import paths:
// ADK changed its module path, not the session and memory contracts this
// package implements. Keeping one source (as the Go project generates
// go/types from types2) means a fix lands once; this test fails when the
// copies drift, and `go generate` rewrites them.
func TestGenerated(t *testing.T) {
	out, err := exec.Command("go", "run", "gen.go", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("generated files are stale: %v\n%s", err, out)
	}
}
