package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// raceConfig is what the erasure race's child processes open.
type raceConfig struct {
	DB, DSN, KeyTable string
}

func (rc raceConfig) config() config.Config {
	c := config.Default()
	c.DBPath, c.DSN, c.KeyTable = rc.DB, rc.DSN, rc.KeyTable
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	return c
}

// TestErasureChild is the other processes of TestErasureRace: a writer
// that keeps writing carol's checkpoints and memories with her key cached,
// and a reader that holds a transaction open on the key table.
func TestErasureChild(t *testing.T) {
	var arg struct {
		Role string
		RC   raceConfig
	}
	if !childproc.Arg(t, &arg) {
		t.Skip("a child process of TestErasureRace")
	}
	role, rc := arg.Role, arg.RC
	ctx := context.Background()
	say := childproc.Say
	switch role {
	case "erase":
		// A forget killed right after it destroyed the keys.
		h, err := Open(ctx, rc.config())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Keys.StartErasure(ctx, "carol"); err != nil {
			t.Fatal(err)
		}
		say("destroyed")
		time.Sleep(time.Minute)
	case "forget-paused":
		// A Forget killed between its intent and its key transaction
		// (TestKilledForgetsIntentFinishedByNextOpen).
		c := rc.config()
		c.Audit = true
		h, err := Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		h.afterClaim = func(int64) {
			say("claimed")
			time.Sleep(time.Minute)
		}
		_, _ = h.Forget(ctx, "carol")
	case "reader":
		if rc.DSN == "" {
			db, err := sql.Open("sqlite", "file:"+rc.DB+".keys?_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM memvault_data_keys`).Scan(&n); err != nil {
				t.Fatal(err)
			}
		} else {
			conn, err := pgx.Connect(ctx, rc.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{rc.KeyTable, "memvault_data_keys"}.Sanitize()).Scan(&n); err != nil {
				t.Fatal(err)
			}
		}
		say("ready")
		<-childproc.StdinClosed()
	case "writer":
		h, err := Open(ctx, rc.config())
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		var marked atomic.Bool
		stdinClosed := childproc.StdinClosed() // the parent closes it once Forget returned
		go func() {
			<-stdinClosed
			marked.Store(true)
		}()
		after := -1 // writes attempted after the mark
		for i := 0; after < 40; i++ {
			if after < 0 && marked.Load() {
				say("mark")
				after = 0
			}
			if after >= 0 {
				after++
			}
			var err error
			if i%2 == 0 {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"notes": "carol is allergic to peanuts"},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				_, err = h.Saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("carol:w-%d", i%7)}, cp, nil, cp.ChannelVersions)
			} else {
				err = h.Store.Put(ctx, store.Namespace{"users", "carol", "mem"}, fmt.Sprintf("k%d", i), map[string]any{"text": "insulin at night"})
			}
			switch {
			case err == nil:
				say("ack %d", i)
			case errors.Is(err, keys.ErrSubjectErased):
				say("refused %d", i)
			default:
				say("error %d %s", i, strings.ReplaceAll(err.Error(), "\n", " "))
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// child starts a child process of TestErasureChild in role; closing its
// standard input (Child.CloseStdin) tells it to stop (the reader) or marks
// the moment Forget returned (the writer).
func child(t *testing.T, role string, rc raceConfig) *childproc.Child {
	t.Helper()
	return childproc.Start(t, "TestErasureChild", struct {
		Role string
		RC   raceConfig
	}{role, rc})
}

// TestErasureRace runs forget the way an attacker who keeps the master key
// and a backup would test it, with another process reading the key table
// and another writing the subject's data under its cached key:
//   - while the reader holds a copy of the destroyed key, forget reports the
//     erasure pending (exit 3 in the CLI) instead of a false receipt, and a
//     rerun after the reader ends finishes it with the same keys;
//   - no write of the writer is acknowledged once forget returned, and
//     nothing of the subject is left when the writer stops;
//   - the data from before, restored with the key table as it is now and
//     every key the operator holds, does not decrypt the subject's values.
func TestErasureRace(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]raceConfig{"sqlite": {DB: filepath.Join(dir, "agent.db")}}
	if !testing.Short() {
		cases["postgres"] = raceConfig{DSN: pgtest.SchemaDSN(t), KeyTable: fmt.Sprintf("keys_race_%d", time.Now().UnixNano())}
	}
	for name, rc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := rc.config()
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { h.Close() }()
			for _, who := range []string{"carol", "dave"} {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": who + " secret"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: who + ":visit-1"}, cp, nil, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
				if err := h.Store.Put(ctx, store.Namespace{"users", who, "prefs"}, "diet", map[string]any{"note": who + " secret"}); err != nil {
					t.Fatal(err)
				}
			}
			backup := takeBackup(t, h, c)

			writer := child(t, "writer", rc)
			wlines := writer.Lines
			acks := 0
			for line := range wlines {
				if strings.HasPrefix(line, "ack ") {
					if acks++; acks == 20 {
						break // the writer has carol's key cached and writes
					}
				} else if strings.HasPrefix(line, "error ") {
					t.Fatalf("writer before forget: %s", line)
				}
			}
			reader := child(t, "reader", rc)
			rlines := reader.Lines
			if l := <-rlines; l != "ready" {
				t.Fatalf("reader: %q", l)
			}

			r, err := h.ForgetWith(ctx, "carol", ForgetOptions{Wait: 500 * time.Millisecond})
			writer.CloseStdin() // the mark: Forget returned
			if !errors.Is(err, keys.ErrErasurePending) || !r.Pending || r.PendingReason == "" {
				t.Fatalf("forget with a reader holding the key: receipt %+v, %v; want it pending", r, err)
			}
			if len(r.KeyIDs) != 1 || !h.Keys.VerifyReceipt(r) {
				t.Fatalf("pending receipt %+v", r)
			}
			_ = reader.Wait()
			r2, err := h.Forget(ctx, "carol")
			if err != nil || r2.Pending {
				t.Fatalf("forget again after the reader ended: %+v, %v", r2, err)
			}
			if fmt.Sprint(r2.KeyIDs) != fmt.Sprint(r.KeyIDs) || r2.Threads < 1 || r2.Items < 1 || !h.Keys.VerifyReceipt(r2) {
				t.Fatalf("finishing receipt %+v names other keys or rows than the erasure's (%+v)", r2, r)
			}

			// The writer: nothing acknowledged after forget returned.
			_ = writer.Wait()
			marked, lateAcks, refused := false, 0, 0
			for line := range wlines {
				switch {
				case line == "mark":
					marked = true
				case strings.HasPrefix(line, "ack ") && marked:
					lateAcks++
				case strings.HasPrefix(line, "refused "):
					refused++
				case strings.HasPrefix(line, "error "):
					t.Errorf("writer: %s", line)
				}
			}
			if !marked || lateAcks > 0 || refused == 0 {
				t.Fatalf("writer after forget returned: marked %v, %d writes acknowledged, %d refused", marked, lateAcks, refused)
			}
			// Nothing of carol is left.
			for th, err := range h.Saver.(checkpointer.ThreadLister).ListThreads(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(th.ThreadID, "carol:") {
					t.Fatalf("carol's thread %q survived forget", th.ThreadID)
				}
			}
			if its, err := h.Store.(store.Lister).ListItems(ctx, store.Namespace{"users", "carol", "mem"}, store.ListItemsOptions{}); err != nil || len(its) > 0 {
				t.Fatalf("carol's memories after forget: %d, %v", len(its), err)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:visit-1"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "dave secret" {
				t.Fatalf("dave after carol's forget: %v, %v", tup, err)
			}

			// The data from before, restored beside the key table as it is
			// now (a copy of it taken after forget), opened with the master
			// key: carol's values stay sealed.
			restoreBackup(t, h, c, backup)
			h2, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			if _, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:visit-1"}); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("carol's restored thread: %v, want ErrDecrypt", err)
			}
			if _, err := h2.Store.Get(ctx, store.Namespace{"users", "carol", "prefs"}, "diet"); !errors.Is(err, serde.ErrDecrypt) {
				t.Fatalf("carol's restored memory: %v, want ErrDecrypt", err)
			}
			if tup, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:visit-1"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "dave secret" {
				t.Fatalf("dave's restored thread: %v, %v", tup, err)
			}
		})
	}
}

// TestKilledForgetIsFinished: a forget killed (SIGKILL) after it destroyed
// the keys and before it deleted anything is finished by the next run,
// whose receipt names every key the erasure destroyed and every row it
// deleted (before erasure records, the rerun said "the subject had no
// keys" and named none).
func TestKilledForgetIsFinished(t *testing.T) {
	rc := raceConfig{DB: filepath.Join(t.TempDir(), "agent.db")}
	ctx := context.Background()
	h, err := Open(ctx, rc.config())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, th := range []string{"carol:a", "carol:b"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "x"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: th}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "k", map[string]any{"v": "y"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Keys.RotateSubject(ctx, "carol"); err != nil { // two keys
		t.Fatal(err)
	}
	eraser := child(t, "erase", rc)
	if l := <-eraser.Lines; l != "destroyed" {
		t.Fatalf("eraser: %q", l)
	}
	// The child is killed, not stopped: no deferred work runs.
	eraser.Kill()
	r, err := h.Forget(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.KeyIDs) != 2 || r.Threads != 2 || r.Items != 1 || r.Pending || !h.Keys.VerifyReceipt(r) {
		t.Fatalf("receipt of the finishing run: %+v; want 2 keys, 2 threads, 1 item", r)
	}
}
