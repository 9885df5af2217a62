package childproc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/childproc"
)

// In the test's own process, no child runs: IsChild is false and every
// child test skips itself.
func ExampleIsChild() {
	fmt.Println(childproc.IsChild())
	// Output: false
}

// The shape of a kill -9 test: a child writes and says what it
// acknowledged; the parent kills it mid-way and checks every acknowledged
// write is stored.
func ExampleStart() {
	// The child, in the same _test.go file as the parent:
	_ = func(t *testing.T) { // func TestWriterChild(t *testing.T)
		var dbPath string
		if !childproc.Arg(t, &dbPath) {
			t.Skip("a child process of TestKillWriter")
		}
		for i := 0; ; i++ {
			// ... write step i to dbPath, then:
			childproc.Say("acked %d", i)
		}
	}
	// The parent:
	_ = func(t *testing.T) { // func TestKillWriter(t *testing.T)
		c := childproc.Start(t, "TestWriterChild", t.TempDir()+"/db")
		var acked []string
		for line := range c.Lines {
			if step, ok := strings.CutPrefix(line, "acked "); ok {
				if acked = append(acked, step); len(acked) == 100 {
					break
				}
			}
		}
		c.Kill()
		// ... open the database and check every step in acked is there.
	}
}
