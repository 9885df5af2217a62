package childproc_test

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/childproc"
)

// childArg is what the tests' children are given.
type childArg struct {
	Lines int  // lines to say before waiting
	Loop  bool // say lines until killed
	Echo  bool // answer each command until the input ends
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
	if arg.Echo {
		for cmd := range childproc.Commands() {
			childproc.Say("got %s", cmd)
		}
		childproc.Say("commands ended")
		return
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

// TestSend: commands reach the child one line each, in order, each
// answered before the next is sent; closing the input ends the child's
// Commands; a command of two lines is refused, and one sent after the
// input is closed fails.
func TestSend(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("in a child")
	}
	c := childproc.Start(t, "TestChild", childArg{Echo: true})
	for _, cmd := range []string{"put a", "", "put b with spaces"} {
		if err := c.Send(cmd); err != nil {
			t.Fatal(err)
		}
		if got, want := <-c.Lines, "got "+cmd; got != want {
			t.Fatalf("answer to %q = %q, want %q", cmd, got, want)
		}
	}
	if err := c.Send("two\nlines"); err == nil {
		t.Fatal("Send of two lines: no error")
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if got := <-c.Lines; got != "commands ended" {
		t.Fatalf("line after the input closed = %q, want %q", got, "commands ended")
	}
	if err := c.Send("late"); err == nil {
		t.Fatal("Send after Wait: no error")
	}
}

// TestPollUntil: polling goes on past its minimum until the child says
// the line, keeping the lines said before it; it gives up at its bound
// when the line never comes.
func TestPollUntil(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("in a child")
	}
	c := childproc.Start(t, "TestChild", childArg{Lines: 3})
	polls := 0
	said, other := c.PollUntil("line 2", 2, 10*time.Millisecond, time.Minute, func() { polls++ })
	if !said || len(other) != 2 || other[0] != "line 0" || other[1] != "line 1" || polls < 2 {
		t.Fatalf("PollUntil(line 2) = %v, %q after %d polls; want true, [line 0 line 1], 2 polls or more", said, other, polls)
	}

	c = childproc.Start(t, "TestChild", childArg{})
	polls = 0
	start := time.Now()
	said, other = c.PollUntil("never", 3, 10*time.Millisecond, 300*time.Millisecond, func() { polls++ })
	if said || len(other) != 0 || polls < 3 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("PollUntil(never) = %v, %q after %d polls in %v; want false, no lines, 3 polls or more, the whole 300 ms", said, other, polls, time.Since(start))
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := <-c.Lines; got != "stdin closed" {
		t.Fatalf("after PollUntil, the child said %q; want \"stdin closed\"", got)
	}
}
