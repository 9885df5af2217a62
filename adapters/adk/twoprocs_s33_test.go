package adk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/session"

	"github.com/memvault/memvault/adapters/adk"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	"github.com/memvault/memvault/vault"
)

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
	Role, Name string
}

// TestTwoProcsChild is a child of TestTwoProcessesOneSession: a writer
// appends events to one session (re-reading it when another process
// appended first, as ErrStaleSession asks) and says each one it
// acknowledged; a reader gets the session over and over and says how
// many events it saw. Each says every other error it met.
func TestTwoProcsChild(t *testing.T) {
	var arg twoProcsArg
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of TestTwoProcessesOneSession")
	}
	sqlitetest.BusyTimeout(t, twoProcsBusy)
	ctx := context.Background()
	h, err := vault.OpenEnv(ctx)
	if err != nil {
		childproc.Say("error open: %v", err)
		return
	}
	defer h.Close()
	svc, err := adk.NewSessionService(h.Store, adk.Options{})
	if err != nil {
		childproc.Say("error service: %v", err)
		return
	}
	get := &session.GetRequest{AppName: "app", UserID: "u1", SessionID: "s1"}
	childproc.Say("ready")
	stop := childproc.StdinClosed()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		got, err := svc.Get(ctx, get)
		if err != nil {
			childproc.Say("error get: %v", err)
			continue
		}
		if arg.Role == "reader" {
			childproc.Say("read %d", got.Session.Events().Len())
			continue
		}
		id := fmt.Sprintf("%s-%d", arg.Name, i)
		ev := &session.Event{ID: id, Author: "user", Actions: session.EventActions{StateDelta: map[string]any{"last": twoProcsMark + id}}}
		err = svc.AppendEvent(ctx, got.Session, ev)
		if errors.Is(err, adk.ErrStaleSession) {
			continue // another process appended first: read again
		}
		if err != nil {
			childproc.Say("error append: %v", err)
			continue
		}
		childproc.Say("acked %s", id)
	}
}

// TestTwoProcessesOneSession: two processes append to one ADK session in
// one encrypted SQLite file while a third reads it; one writer is killed
// with SIGKILL in the middle. Every event a writer acknowledged is in the
// session afterwards, the reader never saw it shrink, no process met an
// error other than ErrStaleSession (no raw SQLITE_BUSY), and no state value
// is in the files as plaintext.
func TestTwoProcessesOneSession(t *testing.T) {
	if childproc.IsChild() {
		t.Skip("a child process")
	}
	db := filepath.Join(t.TempDir(), "shared.db")
	for k, v := range map[string]string{"MEMVAULT_DB": db, "LANGGRAPH_AES_KEY": twoProcsKey, "MEMVAULT_EMBEDDINGS": "none", "MEMVAULT_DSN": "", "DATABASE_URL": ""} {
		t.Setenv(k, v)
	}
	sqlitetest.BusyTimeout(t, twoProcsBusy) // the children set theirs
	ctx := context.Background()
	h, err := vault.OpenEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := adk.NewSessionService(h.Store, adk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u1", SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	h.Close()

	a := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "writer", Name: "a"})
	b := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "writer", Name: "b"})
	r := childproc.Start(t, "TestTwoProcsChild", twoProcsArg{Role: "reader"})
	acked := map[string]bool{}
	var errs []string
	lastRead, shrank := -1, false
	take := func(line string) {
		switch {
		case strings.HasPrefix(line, "acked "):
			acked[strings.TrimPrefix(line, "acked ")] = true
		case strings.HasPrefix(line, "error "):
			errs = append(errs, line)
		case strings.HasPrefix(line, "read "):
			n, _ := strconv.Atoi(strings.TrimPrefix(line, "read "))
			shrank = shrank || n < lastRead
			lastRead = n
		}
	}
	ackedA := 0
	deadline := time.After(5 * time.Minute)
loop:
	for ackedA < 40 {
		select {
		case line, ok := <-a.Lines:
			if !ok {
				break loop
			}
			take(line)
			if strings.HasPrefix(line, "acked a-") {
				ackedA++
			}
		case line := <-b.Lines:
			take(line)
		case line := <-r.Lines:
			take(line)
		case <-deadline:
			t.Fatalf("writer a acknowledged %d events in 5 minutes (errors: %v)", ackedA, errs)
		}
	}
	a.Kill()
	for line := range a.Lines {
		take(line)
	}
	for n := 0; n < 30; {
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
		t.Error("the reader saw the session shrink")
	}
	h, err = vault.OpenEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	svc, err = adk.NewSessionService(h.Store, adk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for ev := range got.Session.Events().All() {
		have[ev.ID] = true
	}
	lost := 0
	for id := range acked {
		if !have[id] {
			if lost++; lost <= 5 {
				t.Errorf("acknowledged event %s lost", id)
			}
		}
	}
	t.Logf("%d acknowledged, %d stored, %d lost, %d errors", len(acked), got.Session.Events().Len(), lost, len(errs))
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(twoProcsMark)) {
			t.Errorf("%s holds a state value as plaintext", filepath.Base(f))
		}
	}
}
