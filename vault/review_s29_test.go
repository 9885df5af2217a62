package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
)

// s29Put puts one checkpoint of thread after parent ("" for the first),
// holding notes, with metadata md, and returns its id.
func s29Put(ctx context.Context, t *testing.T, h *Handle, thread, parent, notes string, md checkpointer.Metadata) string {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, cp.ChannelVersions); err != nil {
		t.Fatalf("Put(%s): %v", thread, err)
	}
	return cp.ID
}

// TestReviewS29ImportOfErasedSubjectsDump (session 29 review, attack that
// held): `memvault threads export` of a subject's thread taken before
// `forget`, imported again afterwards (`threads import`, a careless
// restore of "lost" threads), is refused with keys.ErrSubjectErased and
// stores nothing — with subjects by thread id, and with subjects by
// metadata for a thread that ran anonymous before naming carol (its
// first line names no subject, so only the later one can refuse it, and
// the import is one unit). README, Erasure step 2: "S stays erased: no
// key is made for S again … until memvault keys readmit S".
func TestReviewS29ImportOfErasedSubjectsDump(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, mode := range []string{"thread-id", "metadata"} {
			t.Run(backend+"/"+mode, func(t *testing.T) {
				c := subjectsConfigOn(t, backend == "postgres")
				thread := "carol:1"
				if mode == "metadata" {
					c.Subjects.ThreadSeparator = ""
					c.Subjects.ThreadMetadataKey = "user_id"
					thread = "visit"
				}
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				first := s29Put(ctx, t, h, thread, "", "anonymous notes", nil)
				s29Put(ctx, t, h, thread, first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
				var dump bytes.Buffer
				if n, err := threadfile.Export(ctx, &dump, h.Saver, thread); err != nil || n != 2 {
					t.Fatalf("Export = %d, %v", n, err)
				}
				if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
					t.Fatalf("Forget(carol): pending %v, %v", r.Pending, err)
				}
				st, err := threadfile.Import(ctx, bytes.NewReader(dump.Bytes()), h.Saver, threadfile.ImportOptions{})
				if !errors.Is(err, keys.ErrSubjectErased) {
					t.Errorf("import of carol's dump after Forget(carol) = %+v, %v; want keys.ErrSubjectErased", st, err)
				}
				n := 0
				for _, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}) {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
				if n != 0 {
					t.Errorf("after the refused import, thread %q holds %d checkpoints; want none", thread, n)
				}
			})
		}
	}
}

// TestReviewS29ReencryptAfterRestoredBackup (session 29 review): the data
// database restored from a backup taken before Forget(carol), beside the
// key table as it is after it (README: "no copy of the data, from any
// time, opens S's values"), still holds carol's rows and memories, sealed
// under her destroyed keys. The operator then rotates the master key (new
// key primary, the old one previous, `keys reencrypt`). Before, the first
// row of carol stopped the run (keys.ErrSubjectErased, 0 rows
// rewritten): bob's values, values of no subject and every memory stayed
// under the old master key, so the rotation could never finish on such a
// database and the old key could not be retired. Now every other row is
// resealed, carol's are left as they are (nothing can open them), and
// the run fails with keys.ErrSubjectErased saying to run forget again;
// after which it succeeds. Also with carol readmitted before the rotation
// (her new keys do not open the restored rows either).
func TestReviewS29ReencryptAfterRestoredBackup(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, readmit := range []bool{false, true} {
			t.Run(fmt.Sprint(backend, "/readmitted=", readmit), func(t *testing.T) {
				s29ReencryptAfterRestoredBackup(ctx, t, backend == "postgres", readmit)
			})
		}
	}
}

// s29Tables are the data tables a PostgreSQL "restore" puts carol's rows
// back into, with the condition that picks hers.
var s29Tables = map[string]string{
	"checkpoints":       `thread_id LIKE 'carol:%'`,
	"checkpoint_blobs":  `thread_id LIKE 'carol:%'`,
	"checkpoint_writes": `thread_id LIKE 'carol:%'`,
	"store":             `prefix LIKE 'users.carol%'`,
}

func s29ReencryptAfterRestoredBackup(ctx context.Context, t *testing.T, pg, readmit bool) {
	c := subjectsConfigOn(t, pg)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	s29Put(ctx, t, h, "carol:1", "", "carol notes", nil)
	s29Put(ctx, t, h, "bob:1", "", "bob notes", nil)
	s29Put(ctx, t, h, "shared", "", "no subject", nil)
	for _, u := range []string{"carol", "bob"} {
		if err := h.Store.Put(ctx, store.Namespace{"users", u}, "diet", map[string]any{"v": u + " diet"}, store.WithoutIndex()); err != nil {
			t.Fatal(err)
		}
	}
	backup := c.DBPath + ".backup"
	if pg {
		// A backup of carol's rows (the others do not change).
		for tbl, cond := range s29Tables {
			if _, err := h.Pool.Exec(ctx, `CREATE TABLE s29_bk_`+tbl+` AS SELECT * FROM `+tbl+` WHERE `+cond); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		copyFileS22(t, c.DBPath, backup)
		if h, err = Open(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
		t.Fatalf("Forget(carol): pending %v, %v", r.Pending, err)
	}
	if readmit {
		if err := h.Readmit(ctx, "carol"); err != nil {
			t.Fatal(err)
		}
		s29Put(ctx, t, h, "carol:2", "", "carol again", nil)
	}
	if pg {
		for tbl := range s29Tables {
			if _, err := h.Pool.Exec(ctx, `INSERT INTO `+tbl+` SELECT * FROM s29_bk_`+tbl); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if !pg {
		copyFileS22(t, backup, c.DBPath)
	}
	rot := c
	rot.Keys.Primary, rot.Keys.Previous = otherKey, []string{c.Keys.Primary}
	h, err = Open(ctx, rot)
	if err != nil {
		t.Fatalf("Open of the restored backup with the new master key: %v", err)
	}
	// Readmitted, carol has keys again, and her restored rows open under
	// none of them: they must still be told from tampered ones (their
	// key is one her erasure destroyed), or the run stops at the first
	// with serde.ErrDecrypt and the master key cannot be rotated (finding
	// s29-2).
	sv, st, err := h.Reencrypt(ctx, reencrypt.Options{})
	t.Logf("Reencrypt: saver %+v, store %+v, %v", sv, st, err)
	if !errors.Is(err, keys.ErrSubjectErased) || !strings.Contains(err.Error(), "memvault forget") {
		t.Errorf("keys reencrypt on a restored backup holding an erased subject's rows = %v; want keys.ErrSubjectErased naming memvault forget", err)
	}
	if _, err := h.RotateKEK(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// The old key retired: everything but carol's rows opens.
	only := c
	only.Keys.Primary, only.Keys.Previous = otherKey, nil
	only.Subjects.ThreadSeparator = c.Subjects.ThreadSeparator
	h, err = Open(ctx, only)
	if err != nil {
		t.Fatalf("Open with the new key only: %v", err)
	}
	defer h.Close()
	for _, th := range []string{"bob:1", "shared"} {
		if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th}); err != nil || tup == nil {
			t.Errorf("GetTuple(%s) with the old key retired: %v, %v (not resealed)", th, tup, err)
		}
	}
	if it, err := h.Store.Get(ctx, store.Namespace{"users", "bob"}, "diet"); err != nil || it == nil {
		t.Errorf("bob's memory with the old key retired: %v, %v (not resealed)", it, err)
	}
	if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil {
		t.Errorf("carol:1 of the restored backup opens after Forget(carol)")
	}
	if readmit && pg {
		// What carol wrote once readmitted was resealed too (on
		// SQLite the restored file predates it).
		if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"}); err != nil || tup == nil {
			t.Errorf("GetTuple(carol:2), written after Readmit, with the old key retired: %v, %v (not resealed)", tup, err)
		}
	}
	if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
		t.Fatalf("Forget(carol) again: pending %v, %v", r.Pending, err)
	}
	if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil {
		t.Errorf("keys reencrypt after forget ran again: %v", err)
	}
}

// TestReviewS29HostileValueErrorsCarryNoValue (session 29 review): a value
// that cannot be stored fails its write; the error must not carry the
// value's text (plaintext, bound for logs) nor grow with it. A
// json.Number beyond float64 (a non-integer literal such as
// "1.<digits>e99999") was quoted whole: "number 1.234…e99999 is beyond
// float64", however long — and the digits are the value; so was a
// json.Number that is not a number in a checkpoint or a pending write
// ("invalid json.Number \"pin 4111…\"", serde).
func TestReviewS29HostileValueErrorsCarryNoValue(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	secret := "4111111111111111" + strings.Repeat("7", 1<<16)
	for name, v := range map[string]any{
		"json.Number beyond float64": json.Number("0." + secret + "e99999"),
		"in a struct":                struct{ N json.Number }{json.Number("0." + secret + "e99999")},
		"json.Number not a number":   json.Number("pin " + secret),
		"map key not UTF-8":          map[string]any{"\xff" + secret: 1},
	} {
		t.Run(name, func(t *testing.T) {
			errs := map[string]error{
				"store put": h.Store.Put(ctx, store.Namespace{"users", "carol"}, "k", map[string]any{"v": v}, store.WithoutIndex()),
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": v},
				ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
			_, errs["checkpoint put"] = h.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:1"}, cp, nil, cp.ChannelVersions)
			errs["put_writes"] = h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "carol:1", CheckpointID: cp.ID}, []checkpointer.Write{{Channel: "notes", Value: v}}, "task", "")
			for op, err := range errs {
				if err == nil {
					// The checkpoint serializer stores it (as its text).
					if op == "store put" {
						t.Errorf("%s of a hostile value: no error", op)
					}
					continue
				}
				if msg := err.Error(); strings.Contains(msg, "4111111111111111") || len(msg) > 4096 {
					t.Errorf("%s: the error (%d bytes) carries the value's text: %.200s…", op, len(msg), msg)
				}
			}
		})
	}
}

// TestReviewS29SubjectReportOmitsBulkChanges (session 29 review): `audit
// show --subject carol` promises "the records of reads and changes of this
// subject's data (listings of every thread included: they may have
// returned it)". Changes whose targets are not known when they are
// recorded — a retention sweep (thread.delete "retention:…"), a
// DeleteForRuns (thread.delete "runs:N"), a store TTL sweep (item.delete
// "ttl:expired"), a DeletePrefix of ("users") spanning every user
// (item.delete "users"), a re-encryption — are recorded with no subject,
// and the filter dropped them: each of these deleted or rewrote carol's
// data here, and her report showed none of them.
func TestReviewS29SubjectReportOmitsBulkChanges(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	first := s29Put(ctx, t, h, "carol:1", "", "carol notes", nil)
	s29Put(ctx, t, h, "carol:1", first, "carol notes 2", nil)
	s29Put(ctx, t, h, "carol:runs", "", "a run of carol", checkpointer.Metadata{"run_id": "r1"})
	if err := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "diet", map[string]any{"v": "no peanuts"}, store.WithoutIndex()); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	if rep, err := h.Saver.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{}); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("sweep: %+v", rep)
	}
	want["thread.delete retention:"] = true
	if err := h.Saver.(checkpointer.RunDeleter).DeleteForRuns(ctx, []string{"r1"}); err != nil {
		t.Fatal(err)
	}
	want["thread.delete runs:"] = true
	if n, err := h.Store.(store.PrefixDeleter).DeletePrefix(ctx, store.Namespace{"users"}); err != nil || n != 1 {
		t.Fatalf("DeletePrefix(users) = %d, %v", n, err)
	}
	want["item.delete users"] = true
	if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil {
		t.Fatal(err)
	}
	want["reencrypt checkpoints"] = true
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
		for w := range want {
			if strings.HasPrefix(r.Op+" "+r.Target, w) {
				got[w] = true
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for w := range want {
		if !got[w] {
			t.Errorf("carol's report (audit show --subject carol) omits %q, which changed her data", w)
		}
	}
	// A record of another subject's data, or of one item of no
	// subject, is still not carol's.
	if err := h.Store.Put(ctx, store.Namespace{"users", "bob"}, "diet", map[string]any{"v": "x"}, store.WithoutIndex()); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Delete(ctx, store.Namespace{"shared"}, "k"); err != nil {
		t.Fatal(err)
	}
	if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
		if r.Target == "users.bob/diet" || r.Target == "shared/k" {
			t.Errorf("carol's report holds %s %s (subject %q)", r.Op, r.Target, r.Subject)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReviewS29RotateSubjectAfterForget (session 29 review, attack that
// held): `keys rotate-subject carol` after `forget carol` — a careless
// operator, or a rotation job queued before the erasure — is refused with
// keys.ErrSubjectErased, and carol's writes stay refused after it (SQLite,
// PostgreSQL).
func TestReviewS29RotateSubjectAfterForget(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			s29Put(ctx, t, h, "carol:1", "", "carol notes", nil)
			if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
				t.Fatalf("Forget(carol): pending %v, %v", r.Pending, err)
			}
			if err := h.RotateSubject(ctx, "carol"); !errors.Is(err, keys.ErrSubjectErased) {
				t.Errorf("RotateSubject(carol) after Forget(carol) = %v; want keys.ErrSubjectErased", err)
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "again"},
				ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions); !errors.Is(err, keys.ErrSubjectErased) {
				t.Errorf("a write of carol after the refused rotation = %v; want keys.ErrSubjectErased", err)
			}
		})
	}
}

// TestReviewS29ReadsMakeNoKeys (session 29 review, attack that held): the
// inspector promises to be read-only, and a read must not make a key for
// a subject it names (a key row is a write, and one for an erased subject
// would undo "S stays erased"): GetTuple, Get, a search under one
// subject's namespace and one spanning every user, of subjects that have
// no key — and after Forget(bob), of bob — add no row to the key table,
// and bob's reads after his erasure return nothing, without error.
func TestReviewS29ReadsMakeNoKeys(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	c.Embeddings = "hash:256"
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Store.Put(ctx, store.Namespace{"users", "bob"}, "diet", map[string]any{"text": "vegan food"}); err != nil {
		t.Fatal(err)
	}
	subjects := func() []string {
		ks, err := h.Keys.KeyPage(ctx, "", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range ks {
			out = append(out, k.Subject)
		}
		return out
	}
	reads := func(who string) {
		t.Helper()
		if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: who + ":1"}); err != nil || tup != nil {
			t.Errorf("GetTuple(%s:1) = %v, %v", who, tup, err)
		}
		if it, err := h.Store.Get(ctx, store.Namespace{"users", who}, "diet"); err != nil || it != nil {
			t.Errorf("Get(users.%s/diet) = %v, %v", who, it, err)
		}
		if res, err := h.Store.Search(ctx, store.Namespace{"users", who}, store.SearchOptions{Query: "food"}); err != nil || len(res) != 0 {
			t.Errorf("Search(users.%s) = %v, %v", who, res, err)
		}
	}
	reads("zed")
	if _, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "food"}); err != nil {
		t.Fatal(err)
	}
	if got := subjects(); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("after reads of zed, the key table holds keys of %q; want only bob's", got)
	}
	if _, err := h.Forget(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	reads("bob")
	if got := subjects(); len(got) != 0 {
		t.Errorf("after reads of bob once erased, the key table holds keys of %q; want none", got)
	}
}

// TestReviewS29BindingWriteRecordedUnderSubject (session 29 review): with
// subjects named in checkpoint metadata (MEMVAULT_SUBJECT_THREAD_METADATA),
// the put whose metadata first names carol binds the thread to her and
// hands her what it wrote before — a write of carol's data — but its
// record was resolved from the thread's binding before the put made it:
// {checkpoint.write "visit", subject "", the master key's id}. `audit
// show --subject carol` left out the write that made the thread hers.
// The record now names the subject the metadata names.
func TestReviewS29BindingWriteRecordedUnderSubject(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator = ""
			c.Subjects.ThreadMetadataKey = "user_id"
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			first := s29Put(ctx, t, h, "visit", "", "anonymous notes", nil)
			s29Put(ctx, t, h, "visit", first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
			// A name the key table refuses fails the put and names no one.
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "other"}, &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0)},
				checkpointer.Metadata{"user_id": "memvault:thread:x"}, nil); err == nil {
				t.Error("a put naming a reserved subject succeeded")
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var writes []string
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointWrite {
					writes = append(writes, fmt.Sprintf("%s subject %q", r.Target, r.Subject))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := []string{`visit subject ""`, `visit subject "carol"`}
			if len(writes) < 2 || !slices.Equal(writes[:2], want) {
				t.Errorf("checkpoint.write records = %q; want %q first (the put naming carol is hers)", writes, want)
			}
			// An import of the thread under another id binds it too.
			var dump bytes.Buffer
			if _, err := threadfile.Export(ctx, &dump, h.Saver, "visit"); err != nil {
				t.Fatal(err)
			}
			file := strings.ReplaceAll(dump.String(), `"visit"`, `"visit-copy"`)
			if _, err := threadfile.Import(ctx, strings.NewReader(file), h.Saver, threadfile.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			imported := false
			if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
				imported = imported || r.Op == audit.OpCheckpointWrite && r.Target == "visit-copy"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !imported {
				t.Error("the import of carol's thread as visit-copy is not in carol's report")
			}
		})
	}
}
