//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestForgetLockWait: while another forget holds the erasure lock (here:
// the SQLite database's lock file, locked by this process), `memvault
// forget` waits up to --lock-wait, then exits 1 saying another forget
// holds the lock and that nothing changed, and prints no receipt. Before,
// it waited for ever.
func TestForgetLockWait(t *testing.T) {
	env := subjectEnv(t)
	var db string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "MEMVAULT_DB="); ok {
			db = v
		}
	}
	f, err := os.OpenFile(db+".forget-lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// alice owns nothing: --allow-empty, or forget would refuse her
	// before it asks for the lock (TestForgetRefusesSubjectOwningNothing).
	for _, wait := range []string{"300ms", "0s"} {
		r := cli(t, env, "", "forget", "--allow-empty", "--lock-wait", wait, "alice").must(t, 1)
		if !strings.Contains(r.stderr, "another forget holds the erasure lock") || !strings.Contains(r.stderr, "claimed and changed nothing") {
			t.Errorf("forget --lock-wait %s with the lock held: stderr %q", wait, r.stderr)
		}
		if strings.Contains(r.stdout, "erasure receipt") {
			t.Errorf("forget --lock-wait %s with the lock held printed a receipt:\n%s", wait, r.stdout)
		}
	}
	cli(t, env, "", "forget", "--allow-empty", "--lock-wait", "-1s", "alice").must(t, 2)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, env, "", "forget", "--allow-empty", "--lock-wait", "300ms", "alice").must(t, 0); !strings.Contains(r.stdout, "erasure receipt") {
		t.Errorf("forget once the lock is free: %s", r.stdout)
	}
}
