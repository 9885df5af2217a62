package keystest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/serde"
)

// Run runs the suite against tables newTable makes; each call must return
// an empty table.
func Run(t *testing.T, newTable func(t *testing.T) keys.Table) {
	ctx := context.Background()
	at := time.Date(2026, 11, 24, 10, 0, 0, 123456000, time.UTC)
	key := func(subject string, v int, kek string) keys.WrappedKey {
		return keys.WrappedKey{Subject: subject, Version: v, ID: fmt.Sprintf("%016x", v), KEK: kek, Wrapped: []byte(subject + "/" + kek), Created: at}
	}
	t.Run("insert and read newest first", func(t *testing.T) {
		tb := newTable(t)
		for _, v := range []int{2, 1, 3} {
			if err := tb.Insert(ctx, key("carol", v, "kek-a")); err != nil {
				t.Fatal(err)
			}
		}
		must(t, tb.Insert(ctx, key("dave", 1, "kek-a")))
		ks, err := tb.Keys(ctx, "carol")
		must(t, err)
		if len(ks) != 3 || ks[0].Version != 3 || ks[2].Version != 1 {
			t.Fatalf("keys of carol: %+v", ks)
		}
		if k := ks[2]; k.ID != key("carol", 1, "").ID || k.KEK != "kek-a" || !bytes.Equal(k.Wrapped, []byte("carol/kek-a")) || !k.Created.Equal(at) {
			t.Fatalf("key read back: %+v", k)
		}
		if ks, err := tb.Keys(ctx, "nobody"); err != nil || len(ks) != 0 {
			t.Fatalf("keys of an unknown subject: %v, %v", ks, err)
		}
	})
	t.Run("a version inserted twice is ErrKeyExists", func(t *testing.T) {
		tb := newTable(t)
		must(t, tb.Insert(ctx, key("carol", 1, "kek-a")))
		if err := tb.Insert(ctx, key("carol", 1, "kek-b")); !errors.Is(err, keys.ErrKeyExists) {
			t.Fatalf("second insert: %v, want ErrKeyExists", err)
		}
		ks, _ := tb.Keys(ctx, "carol")
		if len(ks) != 1 || ks[0].KEK != "kek-a" {
			t.Fatalf("the first key was replaced: %+v", ks)
		}
	})
	t.Run("concurrent first keys: exactly one wins", func(t *testing.T) {
		tb := newTable(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Go(func() {
				err := tb.Insert(ctx, key("eve", 1, fmt.Sprintf("kek-%d", i)))
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					won++
				} else if !errors.Is(err, keys.ErrKeyExists) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d inserts of version 1 succeeded", won)
		}
	})
	t.Run("destroy removes every key of the subject only", func(t *testing.T) {
		tb := newTable(t)
		must(t, tb.Insert(ctx, key("carol", 1, "kek-a")))
		must(t, tb.Insert(ctx, key("carol", 2, "kek-a")))
		must(t, tb.Insert(ctx, key("dave", 1, "kek-a")))
		gone, err := tb.Destroy(ctx, "carol")
		must(t, err)
		if len(gone) != 2 {
			t.Fatalf("destroyed %d keys, want 2", len(gone))
		}
		for _, k := range gone {
			if k.Subject != "carol" || k.ID == "" || len(k.Wrapped) != 0 {
				t.Fatalf("destroyed key reported as %+v (ids yes, key bytes never)", k)
			}
		}
		if ks, _ := tb.Keys(ctx, "carol"); len(ks) != 0 {
			t.Fatalf("keys of carol after destroy: %d", len(ks))
		}
		if ks, _ := tb.Keys(ctx, "dave"); len(ks) != 1 {
			t.Fatal("destroying carol's keys touched dave's")
		}
		if gone, err := tb.Destroy(ctx, "carol"); err != nil || len(gone) != 0 {
			t.Fatalf("destroying again: %v, %v", gone, err)
		}
		must(t, tb.Insert(ctx, key("carol", 1, "kek-b"))) // a forgotten subject may start again
	})
	t.Run("erasure: recorded with the keys it destroys, finished by a rerun", func(t *testing.T) {
		tb, ok := newTable(t).(keys.ErasureTable)
		if !ok {
			t.Fatalf("%T is not a keys.ErasureTable: erasure cannot be recorded", tb)
		}
		must(t, tb.Insert(ctx, key("carol", 1, "kek-a")))
		must(t, tb.Insert(ctx, key("carol", 2, "kek-a")))
		must(t, tb.Insert(ctx, key("dave", 1, "kek-a")))
		if e, err := tb.Erasure(ctx, "carol"); err != nil || e != nil {
			t.Fatalf("erasure record before any: %+v, %v", e, err)
		}
		if live, err := tb.LiveKey(ctx, "carol", key("carol", 2, "").ID); err != nil || !live {
			t.Fatalf("LiveKey of a stored key: %v, %v", live, err)
		}
		e, err := tb.StartErasure(ctx, "carol", at)
		must(t, err)
		want := []string{key("carol", 1, "").ID, key("carol", 2, "").ID}
		if e.Subject != "carol" || e.Done || !e.Started.Equal(at) || fmt.Sprint(e.KeyIDs) != fmt.Sprint(want) {
			t.Fatalf("erasure started: %+v, want keys %v", e, want)
		}
		if ks, _ := tb.Keys(ctx, "carol"); len(ks) != 0 {
			t.Fatalf("keys of carol after StartErasure: %d", len(ks))
		}
		if live, err := tb.LiveKey(ctx, "carol", key("carol", 2, "").ID); err != nil || live {
			t.Fatalf("LiveKey of a destroyed key: %v, %v", live, err)
		}
		if ks, _ := tb.Keys(ctx, "dave"); len(ks) != 1 {
			t.Fatal("erasing carol touched dave's keys")
		}
		// While the erasure is pending no key is made for the subject and
		// no thread bound to it: it would escape the erasure.
		if err := tb.Insert(ctx, key("carol", 3, "kek-a")); !errors.Is(err, keys.ErrSubjectErased) {
			t.Fatalf("insert during a pending erasure: %v, want ErrSubjectErased", err)
		}
		if tt, ok := tb.(keys.ThreadTable); ok {
			if _, err := tt.BindThread(ctx, "late-thread", "carol"); !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("bind during a pending erasure: %v, want ErrSubjectErased", err)
			}
		}
		must(t, tb.AddErased(ctx, "carol", 3, 4))
		// A rerun (after a crash) carries on with the same record.
		e2, err := tb.StartErasure(ctx, "carol", at.Add(time.Hour))
		must(t, err)
		if !e2.Started.Equal(at) || fmt.Sprint(e2.KeyIDs) != fmt.Sprint(want) || e2.Threads != 3 || e2.Items != 4 {
			t.Fatalf("rerun of a pending erasure: %+v (want the first run's start, keys and counts)", e2)
		}
		must(t, tb.AddErased(ctx, "carol", 1, 0))
		must(t, tb.Purge(ctx, e2, keys.PurgeOptions{}))
		must(t, tb.FinishErasure(ctx, "carol", at.Add(2*time.Hour)))
		got, err := tb.Erasure(ctx, "carol")
		must(t, err)
		// threads keeps the largest count (a rerun finds again the threads a
		// killed run left), items add up.
		if got == nil || !got.Done || !got.Finished.Equal(at.Add(2*time.Hour)) || got.Threads != 3 || got.Items != 4 || fmt.Sprint(got.KeyIDs) != fmt.Sprint(want) {
			t.Fatalf("finished erasure: %+v", got)
		}
		// An erased subject stays erased: a writer that still writes its
		// data fails rather than bringing it back under a new key.
		if err := tb.Insert(ctx, key("carol", 1, "kek-b")); !errors.Is(err, keys.ErrSubjectErased) {
			t.Fatalf("insert after a finished erasure: %v, want ErrSubjectErased", err)
		}
		if err := tb.Readmit(ctx, "dave"); !errors.Is(err, keys.ErrNotErased) {
			t.Fatalf("readmitting a subject never erased: %v, want ErrNotErased", err)
		}
		// Readmitted, the subject comes back under new keys, and a new
		// erasure starts over.
		must(t, tb.Readmit(ctx, "carol"))
		must(t, tb.Insert(ctx, key("carol", 1, "kek-b")))
		e3, err := tb.StartErasure(ctx, "carol", at.Add(3*time.Hour))
		must(t, err)
		if !e3.Started.Equal(at.Add(3*time.Hour)) || len(e3.KeyIDs) != 1 || e3.Threads != 0 || e3.Done {
			t.Fatalf("a new erasure after a readmission: %+v", e3)
		}
		if err := tb.Readmit(ctx, "carol"); !errors.Is(err, keys.ErrNotErased) {
			t.Fatalf("readmitting during a pending erasure: %v, want ErrNotErased", err)
		}
		// Erasing a subject that never had keys is recorded too.
		e4, err := tb.StartErasure(ctx, "nobody", at)
		must(t, err)
		if len(e4.KeyIDs) != 0 || e4.Done {
			t.Fatalf("erasure of a subject without keys: %+v", e4)
		}
	})
	t.Run("rewrap only from the expected KEK", func(t *testing.T) {
		tb := newTable(t)
		must(t, tb.Insert(ctx, key("carol", 1, "kek-a")))
		ok, err := tb.Rewrap(ctx, "carol", 1, "kek-x", "kek-b", []byte("new"))
		if err != nil || ok {
			t.Fatalf("rewrap from the wrong KEK: %v, %v", ok, err)
		}
		ok, err = tb.Rewrap(ctx, "carol", 1, "kek-a", "kek-b", []byte("new"))
		if err != nil || !ok {
			t.Fatalf("rewrap: %v, %v", ok, err)
		}
		ks, _ := tb.Keys(ctx, "carol")
		if ks[0].KEK != "kek-b" || string(ks[0].Wrapped) != "new" || ks[0].ID != key("carol", 1, "").ID {
			t.Fatalf("after rewrap: %+v", ks[0])
		}
	})
	t.Run("KEKs: each wrapping KEK once, in order, bounded", func(t *testing.T) {
		tb := newTable(t)
		l, ok := tb.(keys.KEKLister)
		if !ok {
			t.Skip("the table lists no KEKs")
		}
		got, err := l.KEKs(ctx, 10)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("KEKs of an empty table: %q", got)
		}
		for i, s := range []string{"a", "b", "c", "d", "e"} {
			for v := 1; v <= 3; v++ {
				must(t, tb.Insert(ctx, key(s, v, []string{"env:2", "env:1", "pkcs11:t/l"}[(i+v)%3])))
			}
		}
		must(t, tb.Insert(ctx, key("f", 1, "env:0")))
		want := []string{"env:0", "env:1", "env:2", "pkcs11:t/l"}
		if got, err = l.KEKs(ctx, 10); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("KEKs: %q, %v; want %q", got, err, want)
		}
		if got, err = l.KEKs(ctx, 2); err != nil || fmt.Sprint(got) != fmt.Sprint(want[:2]) {
			t.Fatalf("KEKs(2): %q, %v; want %q", got, err, want[:2])
		}
		if _, err := tb.Destroy(ctx, "f"); err != nil {
			t.Fatal(err)
		}
		if got, err = l.KEKs(ctx, 10); err != nil || fmt.Sprint(got) != fmt.Sprint(want[1:]) {
			t.Fatalf("KEKs after the only key of a KEK was destroyed: %q, %v; want %q", got, err, want[1:])
		}
	})
	t.Run("thread bindings", func(t *testing.T) {
		tb, ok := newTable(t).(keys.ThreadTable)
		if !ok {
			t.Skip("not a keys.ThreadTable")
		}
		for _, th := range []string{"a", "b'; DROP TABLE memvault_thread_subjects; --", "c"} {
			got, err := tb.BindThread(ctx, th, "carol")
			if err != nil || got != "carol" {
				t.Fatalf("bind %q: %q, %v", th, got, err)
			}
		}
		if got, err := tb.BindThread(ctx, "a", "dave"); err != nil || got != "carol" {
			t.Fatalf("rebinding to another subject: %q, %v (the first binding stands)", got, err)
		}
		must(t, func() error { _, err := tb.BindThread(ctx, "d", "dave"); return err }())
		if s, err := tb.BoundSubject(ctx, "d"); err != nil || s != "dave" {
			t.Fatalf("bound subject of d: %q, %v", s, err)
		}
		if s, err := tb.BoundSubject(ctx, "unbound"); err != nil || s != "" {
			t.Fatalf("bound subject of an unbound thread: %q, %v", s, err)
		}
		ths, err := tb.SubjectThreads(ctx, "carol")
		must(t, err)
		if len(ths) != 3 {
			t.Fatalf("carol's threads: %q", ths)
		}
		must(t, tb.UnbindThreads(ctx, "carol"))
		if ths, _ := tb.SubjectThreads(ctx, "carol"); len(ths) != 0 {
			t.Fatalf("after unbind: %q", ths)
		}
		if s, _ := tb.BoundSubject(ctx, "d"); s != "dave" {
			t.Fatal("unbinding carol's threads touched dave's")
		}
	})
	t.Run("copies follow their source into its subject's erasure", func(t *testing.T) {
		tb, ok := newTable(t).(keys.ThreadTable)
		if !ok {
			t.Skip("not a keys.ThreadTable")
		}
		et := tb.(keys.ErasureTable)
		owned := map[string]string{} // thread → the id of its own key
		for i, th := range []string{"anon", "copy", "copy2", "dave-copy", "other", "other-copy"} {
			k := key(keys.ThreadKeyOwner(th), 1, "kek-a")
			k.ID = fmt.Sprintf("%016x", 100+i)
			must(t, tb.Insert(ctx, k))
			owned[th] = k.ID
		}
		// Copies made while anon is bound to no one, a copy of a copy,
		// a copy back onto the source (a cycle), a copy bound since to
		// another subject, and a copy of another anonymous thread.
		must(t, tb.FollowThread(ctx, "copy", "anon"))
		must(t, tb.FollowThread(ctx, "copy2", "copy"))
		must(t, tb.FollowThread(ctx, "anon", "copy2"))
		must(t, tb.FollowThread(ctx, "copy", "anon")) // recorded twice: once
		must(t, tb.FollowThread(ctx, "dave-copy", "anon"))
		must(t, func() error { _, err := tb.BindThread(ctx, "dave-copy", "dave"); return err }())
		must(t, tb.FollowThread(ctx, "other-copy", "other"))
		// The login binds anon afterwards.
		must(t, func() error { _, err := tb.BindThread(ctx, "anon", "carol"); return err }())
		want := []string{"anon", "copy", "copy2", "dave-copy"}
		if ths, err := tb.SubjectThreads(ctx, "carol"); err != nil || fmt.Sprint(ths) != fmt.Sprint(want) {
			t.Fatalf("carol's threads: %q, %v; want %q", ths, err, want)
		}
		e, err := et.StartErasure(ctx, "carol", at)
		must(t, err)
		var wantIDs []string
		for _, th := range want {
			wantIDs = append(wantIDs, owned[th])
		}
		if fmt.Sprint(e.KeyIDs) != fmt.Sprint(wantIDs) {
			t.Fatalf("erasure of carol destroyed %q, want the own keys of %q: %q", e.KeyIDs, want, wantIDs)
		}
		for _, th := range []string{"other", "other-copy"} {
			if ks, err := tb.Keys(ctx, keys.ThreadKeyOwner(th)); err != nil || len(ks) != 1 {
				t.Fatalf("keys of %s after erasing carol: %d, %v", th, len(ks), err)
			}
		}
		// Unbound copies are carol's now (tombstones); a copy bound to
		// dave stays dave's.
		for th, s := range map[string]string{"copy": "carol", "copy2": "carol", "dave-copy": "dave", "other-copy": ""} {
			if got, err := tb.BoundSubject(ctx, th); err != nil || got != s {
				t.Fatalf("bound subject of %s after erasing carol: %q, %v; want %q", th, got, err, s)
			}
		}
		k := key(keys.ThreadKeyOwner("copy2"), 2, "kek-a")
		if err := tb.Insert(ctx, k); !errors.Is(err, keys.ErrSubjectErased) {
			t.Fatalf("a new key of a copy of an erased subject's thread: %v, want ErrSubjectErased", err)
		}
		for _, src := range []string{"anon", "copy2"} {
			if err := tb.FollowThread(ctx, "late", src); !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("a copy of %s after erasing carol: %v, want ErrSubjectErased", src, err)
			}
		}
		must(t, tb.FollowThread(ctx, "late", "other"))
		// Readmitted, carol's copies are no one's again.
		must(t, et.FinishErasure(ctx, "carol", at))
		must(t, et.Readmit(ctx, "carol"))
		if ths, err := tb.SubjectThreads(ctx, "carol"); err != nil || len(ths) != 0 {
			t.Fatalf("carol's threads after readmit: %q, %v", ths, err)
		}
		must(t, tb.FollowThread(ctx, "late2", "copy2"))
	})
	t.Run("copies recorded while an erasure starts: before it or refused", func(t *testing.T) {
		tb, ok := newTable(t).(keys.ThreadTable)
		if !ok {
			t.Skip("not a keys.ThreadTable")
		}
		et := tb.(keys.ErasureTable)
		must(t, func() error { _, err := tb.BindThread(ctx, "src", "erin"); return err }())
		const n = 16
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = tb.FollowThread(ctx, fmt.Sprint("copy-", i), "src") })
		}
		_, err := et.StartErasure(ctx, "erin", at)
		must(t, err)
		wg.Wait()
		for i, err := range errs {
			th := fmt.Sprint("copy-", i)
			switch s, berr := tb.BoundSubject(ctx, th); {
			case berr != nil:
				t.Fatal(berr)
			case err == nil && s != "erin":
				t.Fatalf("%s was recorded but the erasure did not reach it (bound to %q)", th, s)
			case err != nil && !errors.Is(err, keys.ErrSubjectErased):
				t.Fatalf("%s: %v", th, err)
			}
		}
	})
	t.Run("concurrent bindings: one subject wins", func(t *testing.T) {
		tb, ok := newTable(t).(keys.ThreadTable)
		if !ok {
			t.Skip("not a keys.ThreadTable")
		}
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range 8 {
			wg.Go(func() {
				s, err := tb.BindThread(ctx, "contested", fmt.Sprint("s", i))
				if err != nil {
					t.Error(err)
				}
				got[i] = s
			})
		}
		wg.Wait()
		for _, s := range got {
			if s != got[0] || s == "" {
				t.Fatalf("bindings disagree: %q", got)
			}
		}
	})
	t.Run("pages in subject and version order", func(t *testing.T) {
		tb := newTable(t)
		subjects := []string{"b", "a", "c'; DROP TABLE memvault_data_keys; --", "ü"}
		for _, s := range subjects {
			for v := 1; v <= 3; v++ {
				must(t, tb.Insert(ctx, key(s, v, "kek-a")))
			}
		}
		var all []keys.WrappedKey
		after, afterV := "", 0
		for {
			p, err := tb.Page(ctx, after, afterV, 5)
			must(t, err)
			all = append(all, p...)
			if len(p) < 5 {
				break
			}
			after, afterV = p[len(p)-1].Subject, p[len(p)-1].Version
		}
		if len(all) != 12 {
			t.Fatalf("paged %d keys, want 12", len(all))
		}
		seen := map[string]bool{}
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			if a.Subject == b.Subject && a.Version >= b.Version {
				t.Fatalf("versions out of order: %+v then %+v", a, b)
			}
			if a.Subject != b.Subject && seen[b.Subject] {
				t.Fatalf("subject %q paged twice", b.Subject)
			}
			seen[a.Subject] = true
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// masterKey is the public key of NewHierarchy's master serializer: test
// use only.
const masterKey = "keystest-master-key-32-bytes-xx!"

// NewHierarchy returns a key hierarchy over table and sub whose master key
// is a fixed, public test key. Hierarchies made over one table stand for
// processes sharing a key table, each with a key cache of its own (as
// checkpointertest.RunErasure and storetest.RunErasure use them).
func NewHierarchy(t testing.TB, table keys.Table, sub keys.Subjects) *keys.Hierarchy {
	t.Helper()
	k, err := crypto.NewKey([]byte(masterKey))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	master, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	h, err := keys.New(keys.Options{Master: master, Table: table, Subjects: sub})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
