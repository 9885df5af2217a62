package vault

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// Session 24 review: attacks on the erasure intents session 23 added
// (subject_erasure_N in the data database's memvault_meta, finished by
// Open in the key table, vault/open.go checkKeyErasures and claimErasure).

// TestReviewS24ForgedIntentErasesAnySubject: README keeps the key table
// apart from the data ("its own file, schema or database") so that the
// data's custodians and its backups cannot reach the keys. An intent row
// is plain text in the data database, and Open trusts it: anyone who can
// write one row to the data database's memvault_meta (no key, no access
// to the key table) makes the next Open of any process destroy any
// subject's keys — crypto-shredding every backup of that subject's data,
// which deleting the rows could not — and the audit trail records no
// erasure of that subject (Open finishes the intent before the trail
// opens, and never logs it).
func TestReviewS24ForgedIntentErasesAnySubject(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			c := s23Config(t.TempDir())
			c.Audit = true
			if pg {
				c.DSN = pgtest.SchemaDSN(t)
				c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano()) // the key table in its own schema
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "dave:1", "dave's records"); err != nil {
				t.Fatal(err)
			}
			have, err := h.keyTable.Erasures(ctx)
			if err != nil {
				t.Fatal(err)
			}
			h.Close()

			// The attacker: one row in the data database, nothing else.
			forge := `INSERT INTO memvault_meta (name, value) VALUES ('` + erasureIntentMark(have+1) + `', 'dave')`
			if pg {
				conn, err := pgx.Connect(ctx, c.DSN)
				if err != nil {
					t.Fatal(err)
				}
				_, err = conn.Exec(ctx, forge)
				conn.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
			} else if _, err := openRaw(t, c.DBPath).Exec(forge); err != nil {
				t.Fatal(err)
			}

			h, err = Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			erased, why := false, ""
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "dave:1"}); err != nil || tup == nil {
				erased, why = true, fmt.Sprint(err)
			}
			logged := 0
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpSubjectErase {
					logged++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if erased {
				t.Fatalf("one forged memvault_meta row (%s = dave), written with access to the data database only, made Open destroy dave's keys "+
					"in the key table (dave:1: %.120s); the audit trail holds %d subject.erase records", erasureIntentMark(have+1), why, logged)
			}
		})
	}
}

// TestReviewS24ForgedIntentWedgesOpen: an intent row whose subject the key
// hierarchy refuses (empty, here) makes every Open fail — every process
// and every CLI command — and the error does not say that the row is the
// cause or how to get out (delete it by hand).
func TestReviewS24ForgedIntentWedgesOpen(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	have, err := h.keyTable.Erasures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := openRaw(t, c.DBPath).Exec(`INSERT INTO memvault_meta (name, value) VALUES (?, '')`, erasureIntentMark(have+1)); err != nil {
		t.Fatal(err)
	}
	h, err = Open(ctx, c)
	if err == nil {
		h.Close()
		return // held: a bad intent does not wedge Open
	}
	if !strings.Contains(err.Error(), erasureIntentMark(have+1)) {
		t.Fatalf("a memvault_meta intent row with an empty subject makes every Open fail, and the error does not name the row to delete: %v", err)
	}
}

// TestReviewS24IntentCoveredByAnotherForget: intents are matched to the key
// table's count by number, not by subject. A Forget(carol) killed after
// its intent (number n) and before its key transaction leaves carol's keys
// live for the next Open to finish (TestErasureIntentFinishedAtOpen). But
// a Forget(dave) run meanwhile by any process already open claims n+1,
// counts one erasure (the table's count reaches n), then its
// checkKeyErasures walks from n+1 and erases dave a second time: the count
// passes carol's intent, which no Open ever finishes. Carol's values read
// back after the restart that was to finish her erasure.
func TestReviewS24IntentCoveredByAnotherForget(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	running, err := Open(ctx, c) // a worker that stays up
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	if _, err := putCarolS22(ctx, running, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, running, "dave:1", "dave takes nothing"); err != nil {
		t.Fatal(err)
	}

	killed, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := killed.log(ctx, audit.OpSubjectErase, "carol", "carol"); err != nil {
		t.Fatal(err)
	}
	if err := claimErasure(ctx, killed.erasureMarks, killed.keyTable, "carol"); err != nil { // killed right after
		t.Fatal(err)
	}
	killed.Close()

	if _, err := running.Forget(ctx, "dave"); err != nil {
		t.Fatal(err)
	}
	have, _ := running.keyTable.Erasures(ctx)
	running.Close()

	h, err := Open(ctx, c) // the restart that finishes killed erasures
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
		t.Fatalf("Forget(carol) killed after its intent, then Forget(dave) by a running process (key table count now %d: dave counted twice): "+
			"the next Open did not finish carol's erasure, carol:1 reads back %q", have, tup.Checkpoint.ChannelValues["notes"])
	}
}
