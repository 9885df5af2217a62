package pkcs11_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	p11 "github.com/miekg/pkcs11"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/keyproviders/pkcs11"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// module is SoftHSM2's PKCS#11 library, installed by
// scripts/install-deps.sh (Debian's softhsm2); SOFTHSM2_MODULE overrides.
func module(t *testing.T) string {
	if m := os.Getenv("SOFTHSM2_MODULE"); m != "" {
		return m
	}
	for _, m := range []string{"/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so", "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so"} {
		if _, err := os.Stat(m); err == nil {
			return m
		}
	}
	t.Fatal("SoftHSM2 is not installed: run scripts/install-deps.sh (Debian package softhsm2)")
	return ""
}

// token makes a fresh SoftHSM2 token for the test, in a directory of its
// own, and returns the provider's options for it.
func token(t *testing.T) pkcs11.Options {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "softhsm2.conf")
	if err := os.MkdirAll(filepath.Join(dir, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+filepath.Join(dir, "tokens")+"\nobjectstore.backend = file\nlog.level = ERROR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	out, err := exec.Command("softhsm2-util", "--init-token", "--free", "--label", "memvault-test", "--pin", "1234", "--so-pin", "5678").CombinedOutput()
	if err != nil {
		t.Fatalf("softhsm2-util --init-token: %v\n%s", err, out)
	}
	return pkcs11.Options{Module: module(t), TokenLabel: "memvault-test", PIN: "1234", KeyLabel: "memvault-kek", CreateKey: true}
}

func open(t *testing.T, o pkcs11.Options) *pkcs11.Provider {
	t.Helper()
	p, err := pkcs11.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestWrapUnwrap: a data key wrapped in the token unwraps only with the
// same associated data and unchanged bytes; the key survives reopening
// the token; it cannot be read out of it.
func TestWrapUnwrap(t *testing.T) {
	ctx := context.Background()
	o := token(t)
	p := open(t, o)
	dk := bytes.Repeat([]byte{7}, 32)
	w, err := p.Wrap(ctx, dk, []byte("carol/1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(w, dk) || len(w) != 12+32+16 {
		t.Fatalf("wrapped key of %d bytes", len(w))
	}
	if got, err := p.Unwrap(ctx, w, []byte("carol/1")); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap: %v", err)
	}
	bad := bytes.Clone(w)
	bad[20] ^= 1
	for name, try := range map[string]func() ([]byte, error){
		"other ad":  func() ([]byte, error) { return p.Unwrap(ctx, w, []byte("dave/1")) },
		"tampered":  func() ([]byte, error) { return p.Unwrap(ctx, bad, []byte("carol/1")) },
		"truncated": func() ([]byte, error) { return p.Unwrap(ctx, w[:10], []byte("carol/1")) },
	} {
		if _, err := try(); !errors.Is(err, keys.ErrUnwrap) {
			t.Errorf("%s: %v, want keys.ErrUnwrap", name, err)
		}
	}
	if p.KEKID() != "pkcs11:memvault-test/memvault-kek" {
		t.Fatalf("KEK id %q", p.KEKID())
	}
	must(t, p.Close())
	if _, err := p.Wrap(ctx, dk, nil); !errors.Is(err, pkcs11.ErrClosed) {
		t.Fatalf("wrap after close: %v", err)
	}

	// The same token, opened again without CreateKey, has the key.
	o.CreateKey = false
	p2 := open(t, o)
	if got, err := p2.Unwrap(ctx, w, []byte("carol/1")); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap after reopening: %v", err)
	}
	must(t, p2.Close())
	notExtractable(t, o)

	o.KeyLabel = "absent"
	if _, err := pkcs11.Open(o); err == nil {
		t.Fatal("a missing key without CreateKey opened")
	}
	o.PIN = "0000"
	if _, err := pkcs11.Open(o); err == nil {
		t.Fatal("a wrong PIN opened the token")
	}
}

// notExtractable checks through PKCS#11 itself that the token refuses to
// reveal the key's value.
func notExtractable(t *testing.T, o pkcs11.Options) {
	t.Helper()
	ctx := p11.New(o.Module)
	must(t, ctx.Initialize())
	defer func() { ctx.Finalize(); ctx.Destroy() }()
	slots, err := ctx.GetSlotList(true)
	must(t, err)
	var s p11.SessionHandle
	for _, sl := range slots {
		if ti, err := ctx.GetTokenInfo(sl); err == nil && ti.Label == o.TokenLabel {
			s, err = ctx.OpenSession(sl, p11.CKF_SERIAL_SESSION)
			must(t, err)
		}
	}
	must(t, ctx.Login(s, p11.CKU_USER, o.PIN))
	must(t, ctx.FindObjectsInit(s, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, o.KeyLabel)}))
	objs, _, err := ctx.FindObjects(s, 1)
	must(t, err)
	must(t, ctx.FindObjectsFinal(s))
	if len(objs) != 1 {
		t.Fatalf("%d keys labelled %q", len(objs), o.KeyLabel)
	}
	attrs, err := ctx.GetAttributeValue(s, objs[0], []*p11.Attribute{p11.NewAttribute(p11.CKA_VALUE, nil)})
	if err == nil && len(attrs) == 1 && len(attrs[0].Value) > 0 {
		t.Fatal("the token revealed the KEK's value")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHierarchyOnHSM: per-subject data keys wrapped in the HSM seal a
// saver's values; moving existing data keys from the environment KEK to
// the HSM's (rotate-kek) rewrites no data row, and afterwards the data
// reads with the HSM provider alone.
func TestHierarchyOnHSM(t *testing.T) {
	ctx := context.Background()
	hsm := open(t, token(t))
	master := testkeys.Encrypting(t)
	env, err := keys.EnvProviders(master.Keyring())
	must(t, err)
	table := memkeys.New()
	subjects := keys.Subjects{ThreadSeparator: ":"}
	data := filepath.Join(t.TempDir(), "data.db")

	// Before the HSM: data keys wrapped by the environment KEK.
	h, err := keys.New(keys.Options{Master: master, Table: table, Subjects: subjects, Providers: env})
	must(t, err)
	s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h})
	must(t, err)
	for i := range 3 {
		put(t, s, fmt.Sprintf("patient%d:visit", i), fmt.Sprintf("record %d", i))
	}
	must(t, s.Close())
	before := blobs(t, data)

	// The HSM first: rotate-kek moves every data key under it.
	h2, err := keys.New(keys.Options{Master: master, Table: table, Subjects: subjects, Providers: append([]keys.Provider{hsm}, env...)})
	must(t, err)
	st, err := h2.RotateKEK(ctx, nil)
	must(t, err)
	if st.Rewrapped != 3 {
		t.Fatalf("rotation %+v", st)
	}
	if after := blobs(t, data); !bytes.Equal(after, before) {
		t.Fatal("moving the data keys into the HSM rewrote data rows")
	}
	ks, _ := table.Keys(ctx, "patient1")
	if ks[0].KEK != hsm.KEKID() {
		t.Fatalf("data key wrapped by %q", ks[0].KEK)
	}

	// The HSM alone now unwraps the data keys; new subjects get HSM-wrapped keys.
	h3, err := keys.New(keys.Options{Master: master, Table: table, Subjects: subjects, Providers: []keys.Provider{hsm}})
	must(t, err)
	s, err = sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h3})
	must(t, err)
	defer s.Close()
	for i := range 3 {
		tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("patient%d:visit", i)})
		must(t, err)
		if tup.Checkpoint.ChannelValues["notes"] != fmt.Sprintf("record %d", i) {
			t.Fatalf("patient %d: %v", i, tup.Checkpoint.ChannelValues)
		}
	}
	put(t, s, "patient9:visit", "new record")
	if ks, _ := table.Keys(ctx, "patient9"); len(ks) != 1 || ks[0].KEK != hsm.KEKID() {
		t.Fatalf("new subject's key: %+v", ks)
	}
	// Erasure works the same with the HSM.
	_, err = h3.DestroyKeys(ctx, "patient9")
	must(t, err)
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "patient9:visit"}); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("after forget: %v", err)
	}
}

func put(t *testing.T, s checkpointer.Saver, thread, v string) {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": v}, ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
	_, err := s.Put(context.Background(), checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
	must(t, err)
}

// blobs is the raw content of the data file's value rows.
func blobs(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return b
}
