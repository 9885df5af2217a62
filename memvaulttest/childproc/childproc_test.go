package childproc_test

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/memvault/memvault/memvaulttest/childproc"
)

// childArg is what the tests' children are given.
type childArg struct {
	Lines int  // lines to say before waiting
	Loop  bool // say lines until killed
}

// TestChild is the child of the tests below.
func TestChild(t *testing.T) {
	var arg childArg
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of TestStartWait and TestKill")
	}
	if !childproc.IsChild() {
		t.Fatal("IsChild is false in a child")
	}
	for i := range arg.Lines {
		childproc.Say("line %d", i)
	}
	if arg.Loop {
		for i := 0; ; i++ {
			childproc.Say("loop %d", i)
		}
	}
	<-childproc.StdinClosed()
	childproc.Say("stdin closed")
}

// TestStartWait: the argument reaches the child, its lines reach the
// parent in order, closing its input ends it, and the lines it wrote
// before Wait returned are still there after.
func TestStartWait(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("in a child")
	}
	c := childproc.Start(t, "TestChild", childArg{Lines: 3})
	for i := range 3 {
		if got, want := <-c.Lines, "line "+strconv.Itoa(i); got != want {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	var rest []string
	for l := range c.Lines {
		rest = append(rest, l)
	}
	if len(rest) == 0 || rest[0] != "stdin closed" {
		t.Fatalf("lines after Wait = %q, want the child's last line first", rest)
	}
}

// TestKill: Kill ends a child that would never end by itself with
// SIGKILL, and Wait reports it.
func TestKill(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("in a child")
	}
	c := childproc.Start(t, "TestChild", childArg{Loop: true})
	for range 10 {
		if _, ok := <-c.Lines; !ok {
			t.Fatal("the child's output ended before it was killed")
		}
	}
	c.Kill()
	var ee *exec.ExitError
	err := c.Wait()
	if !errors.As(err, &ee) {
		t.Fatalf("Wait after Kill = %v, want an *exec.ExitError", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended by %v, want SIGKILL", ws)
	}
}

// TestArgOfAnotherTest: a child started for one test is not a child of
// another (its Arg is false there).
func TestArgOfAnotherTest(t *testing.T) {
	if childproc.Arg(t, nil) {
		t.Fatal("Arg is true in a test no child was started for")
	}
}
