package keys_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/keys/sqlitekeys"
)

// s29eTables returns a fresh in-memory and SQLite key table, by name.
func s29eTables(t *testing.T) map[string]keys.ThreadTable {
	t.Helper()
	sq, err := sqlitekeys.Open(t.Context(), filepath.Join(t.TempDir(), "keys.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return map[string]keys.ThreadTable{"memory": memkeys.New(), "sqlite": sq}
}

// TestReviewS29eSeparatorModeRecordsNoCopy (session 29 erasure review):
// with subjects from thread ids, FollowThread writes nothing to the key
// table — a copy's reach is its id's prefix — so an erasure reaches no
// thread through a copy record, and a copy onto another subject's thread is
// still left to BindThreadTo to refuse (TestCopyAcrossSubjectsRefused).
func TestReviewS29eSeparatorModeRecordsNoCopy(t *testing.T) {
	for name, tb := range s29eTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := tb.BindThread(ctx, "x", "carol"); err != nil {
				t.Fatal(err)
			}
			h := keystest.NewHierarchy(t, tb, keys.Subjects{ThreadSeparator: ":"})
			if err := h.FollowThread(ctx, "dave:1", "x"); err != nil {
				t.Fatal(err)
			}
			if err := h.BindThreadTo(ctx, "dave:1", "carol"); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Fatalf("a copy of carol's onto dave:1 with subjects from ids: %v, want ErrSubjectMismatch", err)
			}
			if ths, err := tb.SubjectThreads(ctx, "carol"); err != nil || fmt.Sprint(ths) != "[x]" {
				t.Fatalf("carol's threads after a copy with subjects from ids: %q, %v; want [x] (nothing recorded)", ths, err)
			}
		})
	}
}

// TestReviewS29eFollowRefusesMismatchBeforeRecording (session 29 erasure
// review, unit of TestReviewS29eRefusedCopyErasesInnocentThread): in
// metadata mode a copy of carol's thread onto dave's is refused by
// FollowThread itself, before the record that would make carol's erasure
// reach dave's thread. A copy onto an unbound thread, onto a thread of the
// same subject, and a self-copy are recorded (or, the self-copy, ignored).
func TestReviewS29eFollowRefusesMismatchBeforeRecording(t *testing.T) {
	for name, tb := range s29eTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			for th, s := range map[string]string{"carol-t": "carol", "carol-2": "carol", "dave-t": "dave"} {
				if _, err := tb.BindThread(ctx, th, s); err != nil {
					t.Fatal(err)
				}
			}
			h := keystest.NewHierarchy(t, tb, keys.Subjects{ThreadMetadataKey: "user_id"})
			if err := h.FollowThread(ctx, "dave-t", "carol-t"); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Fatalf("copy of carol's thread onto dave's: %v, want ErrSubjectMismatch", err)
			}
			for _, c := range [][2]string{{"fresh", "carol-t"}, {"carol-2", "carol-t"}, {"carol-t", "carol-t"}} {
				if err := h.FollowThread(ctx, c[0], c[1]); err != nil {
					t.Fatalf("FollowThread(%s, %s): %v", c[0], c[1], err)
				}
			}
			want := []string{"carol-2", "carol-t", "fresh"}
			if ths, err := tb.SubjectThreads(ctx, "carol"); err != nil || !slices.Equal(ths, want) {
				t.Fatalf("carol's threads: %q, %v; want %q", ths, err, want)
			}
			if ths, err := tb.SubjectThreads(ctx, "dave"); err != nil || fmt.Sprint(ths) != "[dave-t]" {
				t.Fatalf("dave's threads: %q, %v", ths, err)
			}
		})
	}
}

// TestReviewS29eLongCopyChain (session 29 erasure review): a chain of
// copies thousands deep (each a copy of the one before) and a thread that
// is a copy of every one of them: the recursive walks end (UNION stops at
// a thread seen), an erasure reaches the whole chain, and a copy of its
// last thread after the erasure is refused. The walks are linear in the
// records they visit; nothing bounds them but the table itself.
func TestReviewS29eLongCopyChain(t *testing.T) {
	const n = 3000
	for name, tb := range s29eTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := tb.BindThread(ctx, "c0", "carol"); err != nil {
				t.Fatal(err)
			}
			for i := 1; i < n; i++ {
				if err := tb.FollowThread(ctx, fmt.Sprint("c", i), fmt.Sprint("c", i-1)); err != nil {
					t.Fatal(err)
				}
				if i%500 == 0 {
					// a fan-in: one thread copied from many
					if err := tb.FollowThread(ctx, "fan", fmt.Sprint("c", i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			// a cycle back to the root
			if err := tb.FollowThread(ctx, "c0", fmt.Sprint("c", n-1)); err != nil {
				t.Fatal(err)
			}
			ths, err := tb.SubjectThreads(ctx, "carol")
			if err != nil || len(ths) != n+1 {
				t.Fatalf("carol's threads: %d, %v; want %d", len(ths), err, n+1)
			}
			if _, err := tb.(keys.ErasureTable).StartErasure(ctx, "carol", time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := tb.FollowThread(ctx, "late", fmt.Sprint("c", n-1)); !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("copy of the chain's end after carol's erasure: %v, want ErrSubjectErased", err)
			}
		})
	}
}

// BenchmarkReviewS29eFollowDepth times FollowThread on SQLite for a copy
// of a thread at the end of a chain of copies depth deep, next to a copy
// of a thread that is a copy of nothing (depth 0, the baseline) in the same
// run: a fork of a fork of a fork… each conversation turn.
func BenchmarkReviewS29eFollowDepth(b *testing.B) {
	for _, depth := range []int{0, 2000} {
		b.Run(fmt.Sprint("depth=", depth), func(b *testing.B) {
			ctx := b.Context()
			tb, err := sqlitekeys.Open(ctx, filepath.Join(b.TempDir(), "keys.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer tb.Close()
			for i := 1; i <= depth; i++ {
				if err := tb.FollowThread(ctx, fmt.Sprint("c", i), fmt.Sprint("c", i-1)); err != nil {
					b.Fatal(err)
				}
			}
			src := fmt.Sprint("c", depth)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := tb.FollowThread(ctx, fmt.Sprint("fork", i), src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReviewS29eCopyOfOtherSubjectsCopyAfterErasure (session 29 erasure
// review): FollowThread checks only the binding of its source, no longer
// every thread the source follows (a walk that cost each copy its chain's
// length). After carol's erasure an unbound copy of her thread, and a copy
// of that, are bound to her and refused; a copy that dave's binding took
// (its keys destroyed by carol's erasure, its rows deleted by forget) holds
// only what dave wrote since, and may be copied again.
func TestReviewS29eCopyOfOtherSubjectsCopyAfterErasure(t *testing.T) {
	for name, tb := range s29eTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(tb.FollowThread(ctx, "copy", "anon"))
			must(tb.FollowThread(ctx, "copy2", "copy"))
			must(tb.FollowThread(ctx, "dave-copy", "copy"))
			_, err := tb.BindThread(ctx, "dave-copy", "dave")
			must(err)
			_, err = tb.BindThread(ctx, "anon", "carol")
			must(err)
			_, err = tb.(keys.ErasureTable).StartErasure(ctx, "carol", time.Now())
			must(err)
			for _, src := range []string{"anon", "copy", "copy2"} {
				if err := tb.FollowThread(ctx, "late-"+src, src); !errors.Is(err, keys.ErrSubjectErased) {
					t.Fatalf("copy of %s after carol's erasure: %v, want ErrSubjectErased", src, err)
				}
			}
			must(tb.FollowThread(ctx, "late-dave", "dave-copy"))
			if ths, err := tb.SubjectThreads(ctx, "dave"); err != nil || fmt.Sprint(ths) != "[dave-copy late-dave]" {
				t.Fatalf("dave's threads: %q, %v", ths, err)
			}
		})
	}
}

// TestReviewS29eKilledCopyKeepsItsRecord (session 29 erasure review; the
// README's promise): a copy killed after FollowThread recorded it, before
// its rows were written, keeps the record. The erasure of the user its
// source is bound to later reaches the destination — which holds nothing
// of hers — binding it to her as a tombstone: another user's binding of
// that id is refused until she is readmitted, then accepted.
func TestReviewS29eKilledCopyKeepsItsRecord(t *testing.T) {
	for name, tb := range s29eTables(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			h := keystest.NewHierarchy(t, tb, keys.Subjects{ThreadMetadataKey: "user_id"})
			if err := h.FollowThread(ctx, "fork", "anon"); err != nil {
				t.Fatal(err)
			}
			// killed here: no row of fork was written
			if err := h.BindThreadTo(ctx, "anon", "carol"); err != nil {
				t.Fatal(err)
			}
			et := tb.(keys.ErasureTable)
			if _, err := et.StartErasure(ctx, "carol", time.Now()); err != nil {
				t.Fatal(err)
			}
			if s, err := tb.BoundSubject(ctx, "fork"); err != nil || s != "carol" {
				t.Fatalf("fork after carol's erasure: bound to %q, %v; want carol (a tombstone)", s, err)
			}
			if s, err := tb.BindThread(ctx, "fork", "dave"); err != nil || s != "carol" {
				t.Fatalf("dave binding fork before carol's readmit: %q, %v; want it kept carol's", s, err)
			}
			if err := et.FinishErasure(ctx, "carol", time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := et.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if s, err := tb.BindThread(ctx, "fork", "dave"); err != nil || s != "dave" {
				t.Fatalf("dave binding fork after carol's readmit: %q, %v", s, err)
			}
		})
	}
}
