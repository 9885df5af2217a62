package keys_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"

	_ "modernc.org/sqlite"
)

func TestEnvProvider(t *testing.T) {
	ctx := context.Background()
	k1, _ := crypto.NewKey(bytes.Repeat([]byte{1}, 32))
	k2, _ := crypto.NewKey(bytes.Repeat([]byte{2}, 32))
	p1, err := keys.NewEnvProvider(k1)
	must(t, err)
	p2, _ := keys.NewEnvProvider(k2)
	dk := bytes.Repeat([]byte{7}, 32)
	w, err := p1.Wrap(ctx, dk, []byte("ad"))
	must(t, err)
	if bytes.Contains(w, dk) {
		t.Fatal("the wrapped key holds the key")
	}
	if got, err := p1.Unwrap(ctx, w, []byte("ad")); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap: %v", err)
	}
	bad := bytes.Clone(w)
	bad[len(bad)-1] ^= 1
	for name, try := range map[string]func() ([]byte, error){
		"other ad":  func() ([]byte, error) { return p1.Unwrap(ctx, w, []byte("other")) },
		"other KEK": func() ([]byte, error) { return p2.Unwrap(ctx, w, []byte("ad")) },
		"tampered":  func() ([]byte, error) { return p1.Unwrap(ctx, bad, []byte("ad")) },
		"truncated": func() ([]byte, error) { return p1.Unwrap(ctx, w[:20], []byte("ad")) },
		"empty":     func() ([]byte, error) { return p1.Unwrap(ctx, nil, []byte("ad")) },
	} {
		if _, err := try(); !errors.Is(err, keys.ErrUnwrap) {
			t.Errorf("%s: %v, want ErrUnwrap", name, err)
		}
	}
	if p1.KEKID() != "env:"+k1.ID().String() || p1.KEKID() == p2.KEKID() {
		t.Fatalf("KEK ids %q %q", p1.KEKID(), p2.KEKID())
	}
}

// TestMoveToAnotherSubjectRefused: a sealed channel value copied from one
// subject's thread into another's does not open there.
func TestMoveToAnotherSubjectRefused(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	h := hierarchy(t, filepath.Join(dir, "keys.db"))
	data := filepath.Join(dir, "data.db")
	s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h})
	must(t, err)
	defer s.Close()
	write(t, s, nil, "carol:chat", nil, "carol's secret")
	write(t, s, nil, "dave:chat", nil, "dave's note")
	db, err := sql.Open("sqlite", data)
	must(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE checkpoint_blobs SET blob = (SELECT blob FROM checkpoint_blobs WHERE thread_id = 'carol:chat') WHERE thread_id = 'dave:chat'`)
	must(t, err)
	if _, err := read(t, s, nil, "dave:chat", nil); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("carol's value under dave's thread: %v, want ErrDecrypt", err)
	}
}

// TestRotateKEK: every data key is re-wrapped under the new master key's
// KEK, no data row changes, and everything still reads — with the new
// master key and the old one only as a previous key.
func TestRotateKEK(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	tb := memkeys.New()
	oldRing := testkeys.Encrypting(t).Keyring()
	oldMaster, _ := serde.NewEncrypted(nil, oldRing)
	h, err := keys.New(keys.Options{Master: oldMaster, Table: tb, Subjects: subjects})
	must(t, err)
	data := filepath.Join(dir, "data.db")
	s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h})
	must(t, err)
	for i := range 3 {
		write(t, s, nil, fmt.Sprintf("user%d:chat", i), nil, fmt.Sprintf("secret %d", i))
	}
	must(t, s.Close())
	before := dump(t, data)

	newKey, _ := crypto.NewKey(bytes.Repeat([]byte{9}, 32))
	ring, err := crypto.NewKeyring(newKey, oldRing.Keys()...)
	must(t, err)
	master, _ := serde.NewEncrypted(nil, ring)
	h2, err := keys.New(keys.Options{Master: master, Table: tb, Subjects: subjects})
	must(t, err)
	var pages int
	st, err := h2.RotateKEK(ctx, func(keys.KEKRotation) { pages++ })
	must(t, err)
	if st.Scanned != 3 || st.Rewrapped != 3 || pages != 1 {
		t.Fatalf("rotation %+v in %d pages", st, pages)
	}
	if st, _ := h2.RotateKEK(ctx, nil); st.Rewrapped != 0 {
		t.Fatalf("a second rotation re-wrapped %d keys", st.Rewrapped)
	}
	ks, _ := tb.Keys(ctx, "user1")
	if len(ks) != 1 || ks[0].KEK != "env:"+newKey.ID().String() {
		t.Fatalf("after rotation: %+v", ks)
	}
	if after := dump(t, data); after != before {
		t.Fatal("KEK rotation rewrote data rows")
	}
	// Only the new master key now: the data keys unwrap under it.
	only, _ := crypto.NewKeyring(newKey, oldRing.Keys()...)
	onlyMaster, _ := serde.NewEncrypted(nil, only)
	h3, err := keys.New(keys.Options{Master: onlyMaster, Table: tb, Subjects: subjects, Providers: mustProviders(t, newKey)})
	must(t, err)
	s, err = sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h3})
	must(t, err)
	defer s.Close()
	for i := range 3 {
		if got, err := read(t, s, nil, fmt.Sprintf("user%d:chat", i), nil); err != nil || got != fmt.Sprintf("secret %d", i) {
			t.Fatalf("after KEK rotation: %q, %v", got, err)
		}
	}
}

func mustProviders(t *testing.T, k *crypto.Key) []keys.Provider {
	p, err := keys.NewEnvProvider(k)
	must(t, err)
	return []keys.Provider{p}
}

// dump is the data rows of a SQLite checkpointer file, for comparison.
func dump(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	var b strings.Builder
	for _, q := range []string{`SELECT thread_id, channel, version, type, blob FROM checkpoint_blobs ORDER BY 1, 2, 3`,
		`SELECT thread_id, task_id, idx, type, blob FROM checkpoint_writes ORDER BY 1, 2, 3`} {
		rows, err := db.Query(q)
		must(t, err)
		for rows.Next() {
			var a, c, d, e string
			var blob []byte
			must(t, rows.Scan(&a, &c, &d, &e, &blob))
			fmt.Fprintf(&b, "%s|%s|%s|%s|%x\n", a, c, d, e, blob)
		}
		rows.Close()
	}
	if b.Len() == 0 {
		t.Fatal("no data rows")
	}
	return b.String()
}

// TestTwoProcesses: two hierarchies on one key table (two processes) race
// to make a subject's first key and both read each other's values; when
// one rotates the subject's key, the other reads what it seals next.
func TestTwoProcesses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	keyFile, data := filepath.Join(dir, "keys.db"), filepath.Join(dir, "data.db")
	var hs [2]*keys.Hierarchy
	var ss [2]checkpointer.Saver
	for i := range hs {
		hs[i] = hierarchy(t, keyFile)
		s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: hs[i]})
		must(t, err)
		t.Cleanup(func() { s.Close() })
		ss[i] = s
	}
	var wg sync.WaitGroup
	for i := range ss {
		wg.Go(func() { write(t, ss[i], nil, fmt.Sprintf("erin:chat-%d", i), nil, fmt.Sprintf("from %d", i)) })
	}
	wg.Wait()
	for i := range ss {
		for j := range ss {
			if got, err := read(t, ss[i], nil, fmt.Sprintf("erin:chat-%d", j), nil); err != nil || got != fmt.Sprintf("from %d", j) {
				t.Fatalf("process %d reading %d: %q, %v", i, j, got, err)
			}
		}
	}
	must(t, hs[0].RotateSubject(ctx, "erin"))
	write(t, ss[0], nil, "erin:chat-new", nil, "after rotation")
	if got, err := read(t, ss[1], nil, "erin:chat-new", nil); err != nil || got != "after rotation" {
		t.Fatalf("the other process reading under the rotated key: %q, %v", got, err)
	}
	if got, err := read(t, ss[1], nil, "erin:chat-0", nil); err != nil || got != "from 0" {
		t.Fatalf("old key after rotation: %q, %v", got, err)
	}
}

// TestBadSubjects: subjects that cannot be one are refused with a clear
// error, and a thread without the separator has no subject.
func TestBadSubjects(t *testing.T) {
	h := hierarchy(t, filepath.Join(t.TempDir(), "keys.db"))
	for _, s := range []string{"", "nul\x00", "\xff", strings.Repeat("x", 300)} {
		if _, err := h.DestroyKeys(t.Context(), s); err == nil {
			t.Errorf("subject %q accepted", s)
		}
	}
	if got, err := h.ThreadSubject(t.Context(), "no-separator"); err != nil || got != "" {
		t.Fatalf("subject of a thread without separator: %q", got)
	}
	if got := h.NamespaceSubject("users"); got != "" {
		t.Fatalf("subject of the bare prefix: %q", got)
	}
	if got := h.NamespaceSubject("users.carol.prefs"); got != "carol" {
		t.Fatalf("subject of users.carol.prefs: %q", got)
	}
}

// TestReceiptAfterMasterRotation: a receipt signed under the old master
// key still verifies once that key is only a previous one.
func TestReceiptAfterMasterRotation(t *testing.T) {
	old := testkeys.Encrypting(t)
	h, err := keys.New(keys.Options{Master: old, Table: memkeys.New(), Subjects: subjects})
	must(t, err)
	r, err := h.DestroyKeys(t.Context(), "carol")
	must(t, err)
	newKey, _ := crypto.NewKey(bytes.Repeat([]byte{9}, 32))
	ring, _ := crypto.NewKeyring(newKey, old.Keyring().Keys()...)
	master, _ := serde.NewEncrypted(nil, ring)
	h2, err := keys.New(keys.Options{Master: master, Table: memkeys.New(), Subjects: subjects})
	must(t, err)
	if !h2.VerifyReceipt(r) {
		t.Fatal("the receipt no longer verifies after the master key rotated")
	}
	only, _ := crypto.NewKeyring(newKey)
	onlyNew, _ := serde.NewEncrypted(nil, only)
	h3, _ := keys.New(keys.Options{Master: onlyNew, Table: memkeys.New(), Subjects: subjects})
	if h3.VerifyReceipt(r) {
		t.Fatal("a receipt verified under a key that never signed it")
	}
}

// TestMetadataBindingSeenByAnotherProcess: a process that found a thread
// unbound (it did not exist yet) reads it right after another process
// created it bound to a subject: the failed open re-reads the binding.
func TestMetadataBindingSeenByAnotherProcess(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	keyFile, data := filepath.Join(dir, "keys.db"), filepath.Join(dir, "data.db")
	sub := keys.Subjects{ThreadMetadataKey: "user_id"}
	var ss [2]checkpointer.Saver
	for i := range ss {
		tb, err := sqlitekeys.Open(ctx, keyFile)
		must(t, err)
		t.Cleanup(func() { tb.Close() })
		h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: tb, Subjects: sub})
		must(t, err)
		s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h})
		must(t, err)
		t.Cleanup(func() { s.Close() })
		ss[i] = s
	}
	// The thread starts without a subject; process 1 reads it (and so
	// takes it as unbound for a while).
	first := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "intake"}, ChannelVersions: map[string]string{"notes": "1"}}
	_, err := ss[0].Put(ctx, checkpointer.Config{ThreadID: "visit"}, first, checkpointer.Metadata{"step": 0}, first.ChannelVersions)
	must(t, err)
	if tup, err := ss[1].GetTuple(ctx, checkpointer.Config{ThreadID: "visit"}); err != nil || tup.Checkpoint.ChannelValues["notes"] != "intake" {
		t.Fatalf("before: %v, %v", tup, err)
	}
	// Process 0 names the subject: the thread is bound, the new value
	// sealed under carol's key.
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"notes": "carol's"}, ChannelVersions: map[string]string{"notes": "2"}}
	_, err = ss[0].Put(ctx, checkpointer.Config{ThreadID: "visit"}, cp, checkpointer.Metadata{"user_id": "carol"}, cp.ChannelVersions)
	must(t, err)
	tup, err := ss[1].GetTuple(ctx, checkpointer.Config{ThreadID: "visit"})
	if err != nil || tup.Checkpoint.ChannelValues["notes"] != "carol's" {
		t.Fatalf("process 1 reading the new bound thread: %v, %v", tup, err)
	}
}

// TestHierarchyPrintsNoKey: a Hierarchy holds the audit keys (they sign
// receipts); no fmt verb prints them.
func TestHierarchyPrintsNoKey(t *testing.T) {
	master := testkeys.Encrypting(t)
	h, err := keys.New(keys.Options{Master: master, Table: memkeys.New()})
	if err != nil {
		t.Fatal(err)
	}
	ak, err := keys.DeriveAuditKey(master.Keyring().Primary())
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%v %+v %#v %s %x %q", h, h, h, h, h, h)
	for _, secret := range []string{fmt.Sprintf("%x", ak), string(ak), fmt.Sprint(ak), testkeys.Key} {
		if strings.Contains(out, secret) {
			t.Fatalf("a Hierarchy printed key material: %s", out)
		}
	}
}

// TestSubjectRotation: a subject's vector rotation is the same in every
// process that reads its keys and stays the same when the subject gets a
// new key (stored vectors must keep matching queries), differs between
// subjects, is none for a subject without keys unless asked to create
// them, and is gone with the keys: after the erasure there is none, and
// once the subject is readmitted its new keys rotate otherwise.
func TestSubjectRotation(t *testing.T) {
	ctx := context.Background()
	table := memkeys.New()
	newHierarchy := func() *keys.Hierarchy {
		h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: table, Subjects: keys.Subjects{NamespacePrefix: []string{"users"}}})
		must(t, err)
		return h
	}
	h, other := newHierarchy(), newHierarchy()
	if got := rotate(t, h, "carol", false); got != nil {
		t.Fatalf("a subject without keys has a rotation: %v", got)
	}
	carol := rotate(t, h, "carol", true)
	if carol == nil || fmt.Sprint(carol) == fmt.Sprint(rotationInput) {
		t.Fatalf("carol's rotation: %v", carol)
	}
	if got := rotate(t, other, "carol", false); fmt.Sprint(got) != fmt.Sprint(carol) {
		t.Fatalf("another process rotates carol's vectors to %v, not %v", got, carol)
	}
	if dave := rotate(t, h, "dave", true); fmt.Sprint(dave) == fmt.Sprint(carol) {
		t.Fatal("dave's rotation is carol's")
	}
	must(t, h.RotateSubject(ctx, "carol"))
	if got := rotate(t, newHierarchy(), "carol", false); fmt.Sprint(got) != fmt.Sprint(carol) {
		t.Fatalf("after rotate-subject carol's vectors rotate to %v, not %v", got, carol)
	}
	_, err := h.DestroyKeys(ctx, "carol")
	must(t, err)
	if got := rotate(t, h, "carol", false); got != nil {
		t.Fatalf("after the erasure carol still has a rotation: %v", got)
	}
	if _, err := h.SubjectRotation(ctx, "carol", len(rotationInput), true); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("a rotation made for an erased subject: %v", err)
	}
	_, err = h.FinishErasure(ctx, "carol")
	must(t, err)
	must(t, h.Readmit(ctx, "carol"))
	if got := rotate(t, newHierarchy(), "carol", true); got == nil || fmt.Sprint(got) == fmt.Sprint(carol) {
		t.Fatalf("carol's new keys rotate her vectors to %v (the destroyed ones: %v)", got, carol)
	}
}

// TestSubjectRotationSurvivesThreadBindings: with subjects by metadata,
// binding threads to a user (whose values, before the login, were sealed
// under keys of the thread's own) does not change the user's rotation, nor
// does rotate-subject, whichever came first. (The rotation derives from
// version 1, which no later key replaces; an earlier design of bindings
// added the thread's keys to the user below her oldest, which changed the
// lowest version.)
func TestSubjectRotationSurvivesThreadBindings(t *testing.T) {
	ctx := context.Background()
	table := memkeys.New()
	newHierarchy := func() *keys.Hierarchy {
		h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: table,
			Subjects: keys.Subjects{ThreadMetadataKey: "user_id", NamespacePrefix: []string{"users"}}})
		must(t, err)
		return h
	}
	h := newHierarchy()
	bind := func(thread, subject string) {
		t.Helper()
		_, err := h.SubjectSerializer(ctx, keys.ThreadKeyOwner(thread), true) // the thread's own key
		must(t, err)
		must(t, h.BindThread(ctx, thread, map[string]any{"user_id": subject}))
	}
	carol := rotate(t, h, "carol", true)
	bind("t1", "carol")
	if got := rotate(t, newHierarchy(), "carol", false); fmt.Sprint(got) != fmt.Sprint(carol) {
		t.Fatalf("after a thread's binding carol's vectors rotate to %v, not %v", got, carol)
	}
	bind("t2", "erin")
	erin := rotate(t, h, "erin", true)
	if erin == nil {
		t.Fatal("erin has no rotation to write with")
	}
	must(t, h.RotateSubject(ctx, "erin"))
	bind("t3", "erin")
	if got := rotate(t, newHierarchy(), "erin", false); fmt.Sprint(got) != fmt.Sprint(erin) {
		t.Fatalf("after rotate-subject and a binding erin's vectors rotate to %v, not %v", got, erin)
	}
}

var rotationInput = []float32{0.5, -1, 2, 0.25, 3, -0.5, 1, 0}

// rotate returns rotationInput rotated by subject's rotation, nil when it
// has none.
func rotate(t *testing.T, h *keys.Hierarchy, subject string, create bool) []float32 {
	t.Helper()
	r, err := h.SubjectRotation(context.Background(), subject, len(rotationInput), create)
	must(t, err)
	if r == nil {
		return nil
	}
	out, err := r.Apply(rotationInput)
	must(t, err)
	return out
}
