package audittest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// killAfterAcks reads child's "ack <x>" lines, kills it (SIGKILL) once it
// acknowledged acks of them, and returns every x it acknowledged before it
// died (what of lines it wrote before the kill the loop had not read yet).
func killAfterAcks(t *testing.T, child *childproc.Child, acks int, who string) []string {
	t.Helper()
	var acked, other []string
	killed := false
	for line := range child.Lines {
		x, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			other = append(other, line) // the test framework's output
			continue
		}
		acked = append(acked, x)
		if len(acked) == acks && !killed {
			child.Kill() // the lines it wrote before it died stay in Lines
			killed = true
		}
	}
	if !killed {
		t.Fatalf("the %s stopped after %d acknowledged operations, before it was killed: %s", who, len(acked), strings.Join(other, "\n"))
	}
	return acked
}

// killWriters is how many goroutines of the killed process append at once:
// enough that commits serve several callers each (group commit).
const killWriters = 16

// KillTrail returns the trail of table that WriteUntilKilled writes and
// KillWriter checks, under the suite's key and database id.
func KillTrail(table audit.Table) (*audit.Trail, error) {
	return audit.NewTrail(table, audit.Options{Key: k1, DatabaseID: dbID})
}

// WriteUntilKilled is the body of the process KillWriter kills: it appends
// to tr from several goroutines until it is killed, printing "ack <target>"
// to stdout after each append returned (one write a line, so lines of
// different goroutines do not mix). It returns only when an append fails,
// with its error.
func WriteUntilKilled(tr *audit.Trail) error {
	ctx := audit.WithPrincipal(context.Background(), "kill-writer")
	errs := make(chan error, killWriters)
	for w := range killWriters {
		go func() {
			for i := 0; ; i++ {
				target := fmt.Sprintf("w%d/%d", w, i)
				var err error
				if i%5 == 4 {
					// Two records in one call: both or neither.
					err = tr.LogAll(ctx, []audit.Entry{{Op: audit.OpItemRead, Target: target}, {Op: audit.OpItemWrite, Target: target + "+"}})
				} else {
					err = tr.Log(ctx, audit.OpItemWrite, target, "", "")
				}
				if err != nil {
					errs <- err
					return
				}
				if _, err := os.Stdout.WriteString("ack " + target + "\n"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	return <-errs
}

// KillWriter kills (SIGKILL) child, a process running WriteUntilKilled on
// a table, once it acknowledged acks appends, and checks that the trail of
// the table open returns then verifies and holds every acknowledged record
// (both records of a two-record append), each once.
func KillWriter(t *testing.T, child *childproc.Child, acks int, open func(t *testing.T) audit.Table) {
	t.Helper()
	acked := killAfterAcks(t, child, acks, "writer")
	tr, err := KillTrail(open(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := tr.Verify(ctx)
	if err != nil {
		t.Fatalf("after the kill, Verify = %d, %v", n, err)
	}
	stored := map[string]int{}
	var mu sync.Mutex
	if err := tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		mu.Lock()
		stored[r.Target]++
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, target := range acked {
		if stored[target] != 1 {
			t.Fatalf("acknowledged record %s stored %d times", target, stored[target])
		}
		var w, i int
		if _, err := fmt.Sscanf(target, "w%d/%d", &w, &i); err == nil && i%5 == 4 && stored[target+"+"] != 1 {
			t.Fatalf("the second record of acknowledged append %s stored %d times", target, stored[target+"+"])
		}
	}
	// The trail still takes records after the kill.
	if err := tr.Log(ctx, audit.OpItemRead, "after-kill", "", ""); err != nil {
		t.Fatal(err)
	}
	if m, err := tr.Verify(ctx); err != nil || m != n+1 {
		t.Fatalf("after a record past the kill, Verify = %d, %v; want %d", m, err, n+1)
	}
	t.Logf("killed after %d acknowledged appends; %d records stored", len(acked), n)
}

// KillUnauditedCheckpointWriter kills (SIGKILL) child, a process running
// WriteCheckpointsUntilKilled on a saver with no trail, once it
// acknowledged acks writes, and checks that s, a saver on the same data,
// holds every acknowledged write: each acknowledged put's checkpoint, and
// each acknowledged put_writes' write.
func KillUnauditedCheckpointWriter(t *testing.T, child *childproc.Child, acks int, s checkpointer.Saver) {
	t.Helper()
	acked := killAfterAcks(t, child, acks, "writer")
	ctx := context.Background()
	for _, a := range acked {
		kind, thread, _ := strings.Cut(a, " ")
		tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil {
			t.Fatal(err)
		}
		if tp == nil || (kind == "writes" && len(tp.PendingWrites) != 1) {
			t.Fatalf("acknowledged %s on %s is not stored: %+v", kind, thread, tp)
		}
	}
}
