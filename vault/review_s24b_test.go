package vault

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// Session 24 review (second pass): attacks on the signed erasure intents
// (vault/open.go finishIntents, finishIntent, claimErasure).

// TestReviewS24bReplayedIntentErasesReadmittedSubject: a signed intent is
// bound to the key table and its number, not to the erasure it asked for.
// After Forget(carol) finished and carol was readmitted (new keys, new
// data), someone with write access to the data database alone deletes the
// intent's done row and the settled mark — two DELETEs, no key, no MAC to
// forge: the old signed row is still there — and the next Open of any
// process destroys carol's new keys (finishIntent re-erases a Readmitted
// subject). Exactly what signing intents was meant to stop.
func TestReviewS24bReplayedIntentErasesReadmittedSubject(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol's old records"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if got, err := putCarolS22(ctx, h, "carol:2", "carol's new records"); err != nil || got != "carol's new records" {
		t.Fatalf("carol readmitted: %q, %v", got, err)
	}
	h.Close()

	// The attacker: data database only. The signed intent row stays.
	db := openRaw(t, c.DBPath)
	var intents int
	if err := db.QueryRow(`SELECT count(*) FROM memvault_meta WHERE name LIKE 'erasure_intent_0%'`).Scan(&intents); err != nil || intents == 0 {
		t.Fatalf("no signed intent row left by Forget (%d, %v)", intents, err)
	}
	if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name LIKE 'erasure_done_%' OR name = 'erasure_intents_settled'`); err != nil {
		t.Fatal(err)
	}

	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"})
	if err != nil || tup == nil {
		t.Fatalf("two DELETEs in the data database (the done row and the settled mark of carol's finished, readmitted erasure) made Open "+
			"replay her old signed intent and destroy her new keys: carol:2 (written after Readmit) reads %v, %.160v; warnings %q", tup, err, h.Warnings)
	}
}

// TestReviewS24bOutOfRangeIntentRowBreaksForget: a memvault_meta row named
// like an intent whose number does not fit an int64 is "left alone with a
// warning", but strconv.ParseInt returns math.MaxInt64 with its range
// error, finishIntents moves the settled mark to it (through = max(through,
// n)), and the mark never goes down. claimErasure then starts at
// MaxInt64+1, which wraps negative: every later Forget writes 1 000 signed
// intent rows with negative numbers and fails ("1000 erasures begun at
// once") — erasure is disabled for good, by one row, and Open said only
// that the row was left alone.
func TestReviewS24bOutOfRangeIntentRowBreaksForget(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "dave:1", "dave's records"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	db := openRaw(t, c.DBPath)
	if _, err := db.Exec(`INSERT INTO memvault_meta (name, value) VALUES ('erasure_intent_99999999999999999999', 'x')`); err != nil {
		t.Fatal(err)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	settled, _ := markCount(ctx, h.erasureMarks, erasuresSettledMark)
	_, ferr := h.ForgetWith(ctx, "dave", ForgetOptions{})
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM memvault_meta WHERE name LIKE 'erasure_intent_-%'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if ferr != nil || rows > 0 {
		t.Fatalf("one out-of-range intent row (Open warned: %q) moved the settled mark to %d; Forget(dave) then: %v; "+
			"%d intent rows with negative numbers written", strings.Join(h.Warnings, "; "), settled, ferr, rows)
	}
}

// TestReviewS24bRetriedForgetThenReadmitReErases: no attacker needed. A
// Forget(carol) killed after its key transaction and before its done mark
// leaves intent n undone; the retry runs in another process that was
// already open (an application server; its Open did not see intent n),
// so ForgetWith claims, finishes and marks done an intent of its own and
// leaves n to "the next Open". The erasure is finished, carol is
// readmitted and writes again — and the next Open of any process finds
// intent n undone, sees carol Readmitted, and destroys her new keys.
func TestReviewS24bRetriedForgetThenReadmitReErases(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) { retriedForgetThenReadmit(t, pg) })
	}
}

func retriedForgetThenReadmit(t *testing.T, pg bool) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	if pg {
		c.DSN = pgtest.SchemaDSN(t)
		c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
	}
	server, err := Open(ctx, c) // long-running, opened before the kill
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if _, err := putCarolS22(ctx, server, "carol:1", "carol's old records"); err != nil {
		t.Fatal(err)
	}
	worker, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// worker's Forget(carol): intent, key transaction, then killed.
	if _, err := worker.claimErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Keys.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	worker.Close()

	// The retry, through the server.
	if r, err := server.ForgetWith(ctx, "carol", ForgetOptions{}); err != nil || r.Pending {
		t.Fatalf("retried forget: %+v, %v", r, err)
	}
	if err := server.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if got, err := putCarolS22(ctx, server, "carol:2", "carol's new records"); err != nil || got != "carol's new records" {
		t.Fatalf("carol readmitted: %q, %v", got, err)
	}

	h, err := Open(ctx, c) // a deploy, a CLI command, a cron job
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"}); err != nil || tup == nil {
		t.Fatalf("a Forget killed after its key transaction, retried by an open process and finished, then a Readmit: the next Open "+
			"finished the killed Forget's intent again and destroyed readmitted carol's new keys: carol:2 reads %v, %.120v; warnings %q", tup, err, h.Warnings)
	}
}

// TestReviewS24bWrongKeyOpenSettlesIntent: one Open with a mistyped master
// key (on SQLite with per-subject keys it is not even refused at Open)
// cannot verify the killed Forget(carol)'s signed intent ("not an
// erasure intent this key signed … left alone"), and moves the settled
// mark past it: the next Open with the right key never reads it. Carol's
// erasure is lost for good; a warning of the wrong-key process said only
// "left alone". Likewise a process holding only a new master key after a
// rotation (LANGGRAPH_AES_KEY_PREVIOUS dropped).
func TestReviewS24bWrongKeyOpenSettlesIntent(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol's records"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.claimErasure(ctx, "carol"); err != nil { // Forget(carol) killed right after
		t.Fatal(err)
	}
	h.Close()

	wrong := c
	wrong.Keys.Primary = "fedcba9876543210fedcba9876543210"
	if hw, err := Open(ctx, wrong); err == nil {
		hw.Close()
		t.Log("the wrong key was not refused at all")
	} else {
		t.Logf("wrong key refused: %.160v", err)
	}

	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
		settled, _ := markCount(ctx, h.erasureMarks, erasuresSettledMark)
		t.Fatalf("after one Open with a wrong master key, the killed Forget(carol)'s signed intent is settled (mark %d) and never finished: "+
			"carol:1 reads back %q", settled, tup.Checkpoint.ChannelValues["notes"])
	}
}
