package childproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The environment a child is started with: the name of the test it runs
// and its argument.
const (
	envTest = "MEMVAULT_TEST_CHILD"
	envArg  = "MEMVAULT_TEST_CHILD_ARG"
)

// lineBuffer is how many of a child's lines wait for the parent to read
// them before the child blocks on its output.
const lineBuffer = 1 << 16

// Child is a running child process (see Start).
type Child struct {
	// Lines carries the child's standard output, one line at a time (the
	// test framework's own lines among them); it is closed when the
	// output ends.
	Lines <-chan string

	cmd       *exec.Cmd
	stdin     io.WriteCloser
	readDone  chan struct{} // the output was read to its end
	sendMu    sync.Mutex    // one Send's line at a time
	closeOnce sync.Once
	waitOnce  sync.Once
	waitErr   error
}

// Start starts the test binary again as a child running only test, a
// TestXxx function of the calling package that begins with Arg; arg (any
// value encoding/json encodes) reaches it there, and env (KEY=value) is
// added to the environment it inherits. The child's standard error is the
// parent's. It is killed and reaped when t ends, if it is still running.
func Start(t testing.TB, test string, arg any, env ...string) *Child {
	t.Helper()
	enc, err := json.Marshal(arg)
	if err != nil {
		t.Fatalf("childproc: encode the argument of %s: %v", test, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envTest+"="+test, envArg+"="+string(enc)), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("childproc: start %s: %v", test, err)
	}
	lines := make(chan string, lineBuffer)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	c := &Child{Lines: lines, cmd: cmd, stdin: stdin, readDone: readDone}
	t.Cleanup(c.Kill)
	return c
}

// Arg reports whether this process is a child Start started for t's test
// and, when it is, decodes the child's argument into v (a pointer; nil when
// the child needs none). A child test starts with
//
//	if !childproc.Arg(t, &cfg) {
//		t.Skip("a child process of TestParent")
//	}
func Arg(t testing.TB, v any) bool {
	t.Helper()
	if os.Getenv(envTest) != t.Name() {
		return false
	}
	if v != nil {
		if err := json.Unmarshal([]byte(os.Getenv(envArg)), v); err != nil {
			t.Fatalf("childproc: decode the argument: %v", err)
		}
	}
	return true
}

// IsChild reports whether this process is a child started by Start (for
// any test): a TestMain or a benchmark that must not start children of its
// own asks it.
func IsChild() bool { return os.Getenv(envTest) != "" }

// outMu serializes Say's lines.
var outMu sync.Mutex

// Say writes one line to the child's standard output, at once, for the
// parent's Child.Lines.
func Say(format string, args ...any) {
	line := fmt.Sprintf(format, args...) + "\n"
	outMu.Lock()
	defer outMu.Unlock()
	_, _ = io.WriteString(os.Stdout, line)
}

// Commands returns the lines of the child's standard input — the
// parent's commands, sent one a line with Child.Send — in order; the
// channel is closed once the input ends (the parent called CloseStdin,
// Wait, or died). A child reads its input with Commands or with
// StdinClosed, not both, and calls Commands once.
func Commands() <-chan string {
	cmds := make(chan string)
	go func() {
		defer close(cmds)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			cmds <- sc.Text()
		}
	}()
	return cmds
}

// StdinClosed returns a channel closed once the child's standard input
// ends: the parent called CloseStdin, Wait, or died.
func StdinClosed() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, os.Stdin)
	}()
	return done
}

// Send writes line, which must not hold a newline, to the child's
// standard input as one command for its Commands. It fails once the input
// is closed or the child is gone.
func (c *Child) Send(line string) error {
	if strings.ContainsAny(line, "\r\n") {
		return fmt.Errorf("childproc: a command is one line, not %q", line)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return fmt.Errorf("childproc: send %q: %w", line, err)
	}
	return nil
}

// CloseStdin closes the child's standard input (see StdinClosed); calling
// it again does nothing.
func (c *Child) CloseStdin() {
	c.closeOnce.Do(func() { _ = c.stdin.Close() })
}

// Wait closes the child's standard input and waits for it to exit and
// its output to be read into Lines, which still holds the lines the
// parent has not taken; the
// error is exec.Cmd.Wait's (an *exec.ExitError when the test failed or
// the process was killed). Every call returns the first call's result.
func (c *Child) Wait() error {
	c.CloseStdin()
	c.waitOnce.Do(func() {
		// The output is read to its end first: Cmd.Wait closes the
		// pipe, and lines still in it would be lost. Lines stay in
		// Lines for the parent to read after Wait (up to lineBuffer of
		// them: a child that writes more than that unread blocks).
		<-c.readDone
		c.waitErr = c.cmd.Wait()
	})
	return c.waitErr
}

// PollUntil calls poll every interval — at least minPolls times — until
// the child has said line, and returns whether it did: false when maxWait
// passed first, or the child's output ended. Lines the child said
// meanwhile other than line are returned in order, for the caller to read
// with the rest. It serves a parent that must watch shared state while a
// child works until the child reports a state of its own (an erasure's
// writer refused at last): a fixed number of polls missed that state on a
// loaded machine.
func (c *Child) PollUntil(line string, minPolls int, interval, maxWait time.Duration, poll func()) (said bool, other []string) {
	deadline := time.Now().Add(maxWait)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for polls := 0; polls < minPolls || !said; polls++ {
		if !said && time.Now().After(deadline) {
			break
		}
		select {
		case l, ok := <-c.Lines:
			switch {
			case !ok:
				return said, other
			case l == line:
				said = true
			default:
				other = append(other, l)
			}
		case <-tick.C:
		}
		poll()
	}
	return said, other
}

// Kill kills the child with SIGKILL — no deferred call, no flush, no
// cleanup runs in it — and reaps it. Killing an exited child does nothing.
func (c *Child) Kill() {
	_ = c.cmd.Process.Kill()
	_ = c.Wait()
}

// Pid is the child's process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }
