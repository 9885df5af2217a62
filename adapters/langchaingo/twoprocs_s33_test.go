package langchaingo_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/adapters/langchaingo"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	"github.com/memvault/memvault/vault"
)

// twoProcsKey is the test key the processes share; twoProcsMark starts
// every message, so the file can be searched for plaintext.
const (
	twoProcsKey  = "0123456789abcdef0123456789abcdef"
	twoProcsMark = "plaintext-canary-"
	// twoProcsBusy is how long each process's connections wait for the
	// file's write lock (sqlitetest.BusyTimeout), instead of production's
	// 5 s: on a loaded CI machine a starved lock holder can keep it
	// longer, and the waiter's SQLITE_BUSY would fail the test, which
	// asserts that no process meets one it should have waited out.
	twoProcsBusy = time.Minute
)

type twoProcsArg struct {
	Role string // "writer" or "reader"
	Name string // the writer's name, in its messages
}

// TestTwoProcsChild is a child of TestTwoProcessesOneSQLiteFile: a writer
// appends messages to one conversation and says each one it acknowledged;
// a reader reads the conversation over and over and says how many
// messages it saw. Each says every error it met.
func TestTwoProcsChild(t *testing.T) {
	var arg twoProcsArg
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of TestTwoProcessesOneSQLiteFile")
	}
	sqlitetest.BusyTimeout(t, twoProcsBusy)
	ctx := context.Background()
	h, err := vault.OpenEnv(ctx)
	if err != nil {
		childproc.Say("error open: %v", err)
		return
	}
	defer h.Close()
	hist, err := langchaingo.NewChatMessageHistory(h.Store, "shared", langchaingo.HistoryOptions{})
	if err != nil {
		childproc.Say("error history: %v", err)
		return
	}
	childproc.Say("ready")
	stop := childproc.StdinClosed()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if arg.Role == "writer" {
			msg := fmt.Sprintf("%s%s-%d", twoProcsMark, arg.Name, i)
			if err := hist.AddUserMessage(ctx, msg); err != nil {
				childproc.Say("error add %d: %v", i, err)
				continue
			}
			childproc.Say("acked %s", msg)
			continue
		}
		msgs, err := hist.Messages(ctx)
		if err != nil {
			childproc.Say("error read: %v", err)
			continue
		}
		childproc.Say("read %d", len(msgs))
	}
}

// TestTwoProcessesOneSQLiteFile: two writer processes and a reader share
// one encrypted SQLite file through the adapter; one writer is killed
// with SIGKILL in the middle. Every message a writer acknowledged is in
// the conversation afterwards, the reader never saw it shrink, no process
// met a raw SQLITE_BUSY or "database is locked", and no message is in the
// files (database, WAL) as plaintext.
func TestTwoProcessesOneSQLiteFile(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("a child process")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "shared.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + twoProcsKey, "MEMVAULT_EMBEDDINGS=none", "MEMVAULT_DSN=", "DATABASE_URL="}
	// Create the database first, so the children race only on data.
	t.Setenv("MEMVAULT_DB", db)
	t.Setenv("LANGGRAPH_AES_KEY", twoProcsKey)
	t.Setenv("MEMVAULT_EMBEDDINGS", "none")
	t.Setenv("MEMVAULT_DSN", "")
	t.Setenv("DATABASE_URL", "")
	sqlitetest.BusyTimeout(t, twoProcsBusy) // the children set theirs
	h, err := vault.OpenEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.Close()

	a := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "writer", Name: "a"}, env...)
	b := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "writer", Name: "b"}, env...)
	r := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "reader"}, env...)

	acked := map[string]bool{}
	var errs []string
	lastRead := -1
	shrank := false
	take := func(line string) {
		switch {
		case strings.HasPrefix(line, "acked "):
			acked[strings.TrimPrefix(line, "acked ")] = true
		case strings.HasPrefix(line, "error "):
			errs = append(errs, line)
		case strings.HasPrefix(line, "read "):
			n, _ := strconv.Atoi(strings.TrimPrefix(line, "read "))
			if n < lastRead {
				shrank = true
			}
			lastRead = n
		}
	}
	// Run until writer a has 60 acknowledged messages, then kill it.
	ackedA := 0
	deadline := time.After(5 * time.Minute)
loop:
	for ackedA < 60 {
		select {
		case line, ok := <-a.Lines:
			if !ok {
				break loop
			}
			take(line)
			if strings.HasPrefix(line, "acked "+twoProcsMark+"a-") {
				ackedA++
			}
		case line := <-b.Lines:
			take(line)
		case line := <-r.Lines:
			take(line)
		case <-deadline:
			t.Fatal("writer a acknowledged too few messages in 5 minutes")
		}
	}
	a.Kill()
	for line := range a.Lines {
		take(line)
	}
	// Let b and the reader go on a little after the kill.
	for n := 0; n < 40; {
		select {
		case line := <-b.Lines:
			take(line)
			if strings.HasPrefix(line, "acked ") {
				n++
			}
		case line := <-r.Lines:
			take(line)
		}
	}
	for _, c := range []*childproc.Child{b, r} {
		if err := c.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
		for line := range c.Lines {
			take(line)
		}
	}
	for _, e := range errs {
		t.Errorf("a child met: %s", e)
	}
	if shrank {
		t.Error("the reader saw the conversation shrink")
	}

	h, err = vault.OpenEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hist, err := langchaingo.NewChatMessageHistory(h.Store, "shared", langchaingo.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := hist.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, m := range msgs {
		have[m.GetContent()] = true
	}
	lost := 0
	for m := range acked {
		if !have[m] {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged message %q lost", m)
			}
		}
	}
	t.Logf("%d acknowledged, %d stored, %d lost, %d errors", len(acked), len(msgs), lost, len(errs))
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(twoProcsMark)) {
			t.Errorf("%s holds a message as plaintext", filepath.Base(f))
		}
	}
}
