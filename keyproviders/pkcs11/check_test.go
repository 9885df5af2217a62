package pkcs11_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	p11 "github.com/miekg/pkcs11"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/keyproviders/pkcs11"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// raw is a logged-in session on the test token, outside the provider: what
// an operator's own tools (pkcs11-tool, the HSM's console) do.
type raw struct {
	ctx *p11.Ctx
	s   p11.SessionHandle
}

func rawSession(t *testing.T, o pkcs11.Options) raw {
	t.Helper()
	ctx := p11.New(o.Module)
	if err := ctx.Initialize(); err == nil {
		t.Cleanup(func() { ctx.Finalize(); ctx.Destroy() })
	} else if !errors.Is(err, p11.Error(p11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
		t.Fatal(err)
	}
	slots, err := ctx.GetSlotList(true)
	must(t, err)
	for _, sl := range slots {
		if ti, err := ctx.GetTokenInfo(sl); err == nil && ti.Label == o.TokenLabel {
			s, err := ctx.OpenSession(sl, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
			must(t, err)
			if err := ctx.Login(s, p11.CKU_USER, o.PIN); err != nil && !errors.Is(err, p11.Error(p11.CKR_USER_ALREADY_LOGGED_IN)) {
				t.Fatal(err)
			}
			return raw{ctx, s}
		}
	}
	t.Fatalf("no token %q", o.TokenLabel)
	return raw{}
}

// goodKey is the template of a fit KEK; a case changes one thing in it.
func goodKey(label string) map[uint]any {
	return map[uint]any{
		p11.CKA_CLASS: p11.CKO_SECRET_KEY, p11.CKA_KEY_TYPE: p11.CKK_AES, p11.CKA_VALUE_LEN: 32,
		p11.CKA_LABEL: label, p11.CKA_TOKEN: true, p11.CKA_PRIVATE: true,
		p11.CKA_SENSITIVE: true, p11.CKA_EXTRACTABLE: false,
		p11.CKA_ENCRYPT: true, p11.CKA_DECRYPT: true,
		p11.CKA_SIGN: false, p11.CKA_VERIFY: false, p11.CKA_WRAP: false, p11.CKA_UNWRAP: false, p11.CKA_DERIVE: false,
	}
}

func attrs(m map[uint]any) []*p11.Attribute {
	var out []*p11.Attribute
	for k, v := range m {
		out = append(out, p11.NewAttribute(k, v))
	}
	return out
}

func (r raw) generate(t *testing.T, mech uint, tmpl map[uint]any) p11.ObjectHandle {
	t.Helper()
	k, err := r.ctx.GenerateKey(r.s, []*p11.Mechanism{p11.NewMechanism(mech, nil)}, attrs(tmpl))
	must(t, err)
	return k
}

func (r raw) bools(t *testing.T, k p11.ObjectHandle, types ...uint) []bool {
	t.Helper()
	var tmpl []*p11.Attribute
	for _, a := range types {
		tmpl = append(tmpl, p11.NewAttribute(a, nil))
	}
	got, err := r.ctx.GetAttributeValue(r.s, k, tmpl)
	must(t, err)
	out := make([]bool, len(got))
	for i, a := range got {
		out[i] = len(a.Value) == 1 && a.Value[0] != 0
	}
	return out
}

func (r raw) value(t *testing.T, k p11.ObjectHandle) []byte {
	t.Helper()
	got, err := r.ctx.GetAttributeValue(r.s, k, []*p11.Attribute{p11.NewAttribute(p11.CKA_VALUE, nil)})
	must(t, err)
	return got[0].Value
}

// TestUnfitKeyRefused: an object under the key label that is not an
// AES-256 key kept inside the token for C_Encrypt/C_Decrypt alone is
// refused — CreateKey or not — with an error that says what is wrong and
// how to make a fit key. On the code before the check every one of them
// opened, and the extractable one gave its value away (below).
func TestUnfitKeyRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, r raw, label string)
		want string // in the error
	}{
		{"extractable", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_EXTRACTABLE] = true
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_EXTRACTABLE is true"},
		{"not sensitive", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_SENSITIVE] = false
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_SENSITIVE is false"},
		{"once extractable", func(t *testing.T, r raw, l string) {
			// Its value could be read, then the flag turned off: the key
			// now says "not extractable", but CKA_NEVER_EXTRACTABLE tells.
			k := goodKey(l)
			k[p11.CKA_EXTRACTABLE] = true
			h := r.generate(t, p11.CKM_AES_KEY_GEN, k)
			must(t, r.ctx.SetAttributeValue(r.s, h, []*p11.Attribute{p11.NewAttribute(p11.CKA_EXTRACTABLE, false)}))
		}, "CKA_NEVER_EXTRACTABLE is false"},
		{"once readable", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_SENSITIVE] = false
			h := r.generate(t, p11.CKM_AES_KEY_GEN, k)
			must(t, r.ctx.SetAttributeValue(r.s, h, []*p11.Attribute{p11.NewAttribute(p11.CKA_SENSITIVE, true)}))
		}, "CKA_ALWAYS_SENSITIVE is false"},
		{"imported", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			delete(k, p11.CKA_VALUE_LEN)
			k[p11.CKA_VALUE] = bytes.Repeat([]byte{9}, 32)
			_, err := r.ctx.CreateObject(r.s, attrs(k))
			must(t, err)
		}, "CKA_NEVER_EXTRACTABLE is false"},
		{"wrong type", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_KEY_TYPE] = p11.CKK_GENERIC_SECRET
			delete(k, p11.CKA_ENCRYPT)
			delete(k, p11.CKA_DECRYPT)
			r.generate(t, p11.CKM_GENERIC_SECRET_KEY_GEN, k)
		}, "a generic secret key, not AES"},
		{"short", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_VALUE_LEN] = 16
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "16 bytes long, not 32"},
		{"public", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_PRIVATE] = false
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_PRIVATE is false"},
		{"derive", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_DERIVE] = true
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_DERIVE is true"},
		{"no decrypt", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_DECRYPT] = false
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_DECRYPT is false"},
		{"extra uses", func(t *testing.T, r raw, l string) {
			k := goodKey(l)
			k[p11.CKA_SIGN], k[p11.CKA_WRAP] = true, true
			r.generate(t, p11.CKM_AES_KEY_GEN, k)
		}, "CKA_SIGN, CKA_WRAP true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := token(t)
			r := rawSession(t, o)
			c.make(t, r, o.KeyLabel)
			for _, create := range []bool{false, true} {
				o.CreateKey = create
				p, err := pkcs11.Open(o)
				if err == nil {
					p.Close()
					t.Fatalf("CreateKey %v: the unfit key opened", create)
				}
				if !errors.Is(err, pkcs11.ErrUnfitKey) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Options.CreateKey") {
					t.Fatalf("CreateKey %v: %v", create, err)
				}
			}
			// CreateKey did not slip a second key in beside the unfit one.
			must(t, r.ctx.FindObjectsInit(r.s, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, o.KeyLabel)}))
			objs, _, err := r.ctx.FindObjects(r.s, 10)
			must(t, err)
			must(t, r.ctx.FindObjectsFinal(r.s))
			if len(objs) != 1 {
				t.Fatalf("%d objects labelled %q", len(objs), o.KeyLabel)
			}
		})
	}
}

// TestRestrictKey: a key fit but for uses the provider does not need (as
// made by pkcs11-tool, or by this provider before it stated CKA_SIGN and
// CKA_VERIFY, on SoftHSM2) opens with RestrictKey, which clears those uses
// and nothing else; RestrictKey does not make an extractable key pass.
func TestRestrictKey(t *testing.T) {
	t.Run("extra uses", restrictExtraUses)
	t.Run("extractable", func(t *testing.T) {
		o := token(t)
		r := rawSession(t, o)
		k := goodKey(o.KeyLabel)
		k[p11.CKA_EXTRACTABLE], k[p11.CKA_SIGN] = true, true
		r.generate(t, p11.CKM_AES_KEY_GEN, k)
		o.RestrictKey = true
		if _, err := pkcs11.Open(o); !errors.Is(err, pkcs11.ErrUnfitKey) || !strings.Contains(err.Error(), "CKA_EXTRACTABLE is true") {
			t.Fatalf("extractable with RestrictKey: %v", err)
		}
	})
}

// restrictExtraUses is the first case of TestRestrictKey (each token needs
// the module initialized afresh, hence a subtest each).
func restrictExtraUses(t *testing.T) {
	o := token(t)
	r := rawSession(t, o)
	k := goodKey(o.KeyLabel)
	for _, a := range []uint{p11.CKA_SIGN, p11.CKA_VERIFY, p11.CKA_WRAP, p11.CKA_UNWRAP} {
		k[a] = true
	}
	h := r.generate(t, p11.CKM_AES_KEY_GEN, k)
	o.CreateKey = false
	if _, err := pkcs11.Open(o); !errors.Is(err, pkcs11.ErrUnfitKey) || !strings.Contains(err.Error(), "RestrictKey") {
		t.Fatalf("extra uses: %v", err)
	}
	o.RestrictKey = true
	p := open(t, o)
	w, err := p.Wrap(context.Background(), bytes.Repeat([]byte{1}, 32), []byte("ad"))
	must(t, err)
	must(t, p.Close())
	got := r.bools(t, h, p11.CKA_SIGN, p11.CKA_VERIFY, p11.CKA_WRAP, p11.CKA_UNWRAP, p11.CKA_ENCRYPT, p11.CKA_DECRYPT, p11.CKA_SENSITIVE)
	if fmt.Sprint(got) != "[false false false false true true true]" {
		t.Fatalf("after RestrictKey: sign, verify, wrap, unwrap, encrypt, decrypt, sensitive = %v", got)
	}
	o.RestrictKey = false
	p = open(t, o)
	if dk, err := p.Unwrap(context.Background(), w, []byte("ad")); err != nil || !bytes.Equal(dk, bytes.Repeat([]byte{1}, 32)) {
		t.Fatalf("unwrap: %v", err)
	}

}

// TestCreatedKeyAttributes: the key CreateKey makes is fit, with no use
// but encrypt and decrypt (SoftHSM2 would otherwise default CKA_SIGN and
// CKA_VERIFY to true).
func TestCreatedKeyAttributes(t *testing.T) {
	o := token(t)
	open(t, o).Close()
	r := rawSession(t, o)
	must(t, r.ctx.FindObjectsInit(r.s, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, o.KeyLabel)}))
	objs, _, err := r.ctx.FindObjects(r.s, 2)
	must(t, err)
	must(t, r.ctx.FindObjectsFinal(r.s))
	if len(objs) != 1 {
		t.Fatalf("%d keys", len(objs))
	}
	got := r.bools(t, objs[0], p11.CKA_ENCRYPT, p11.CKA_DECRYPT, p11.CKA_SIGN, p11.CKA_VERIFY, p11.CKA_WRAP, p11.CKA_UNWRAP, p11.CKA_DERIVE,
		p11.CKA_SENSITIVE, p11.CKA_ALWAYS_SENSITIVE, p11.CKA_EXTRACTABLE, p11.CKA_NEVER_EXTRACTABLE, p11.CKA_PRIVATE, p11.CKA_TOKEN)
	if fmt.Sprint(got) != "[true true false false false false false true true false true true true]" {
		t.Fatalf("created key: %v", got)
	}
}

// gcmProvider stands for the provider before the check, on an extractable
// key whose value an attacker (or the operator) read: the same AES-GCM
// wrapping as the token's, computed outside it.
type gcmProvider struct {
	id  string
	key []byte
	ads *[][]byte // the associated data of every key it wrapped
}

func (g gcmProvider) KEKID() string { return g.id }

func (g gcmProvider) aead() cipher.AEAD {
	b, err := aes.NewCipher(g.key)
	if err != nil {
		panic(err)
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	return a
}

func (g gcmProvider) Wrap(_ context.Context, dk, ad []byte) ([]byte, error) {
	*g.ads = append(*g.ads, bytes.Clone(ad))
	iv := make([]byte, 12)
	rand.Read(iv)
	return g.aead().Seal(iv, iv, dk, ad), nil
}

func (g gcmProvider) Unwrap(_ context.Context, w, ad []byte) ([]byte, error) {
	if len(w) < 28 {
		return nil, keys.ErrUnwrap
	}
	dk, err := g.aead().Open(nil, w[:12], w[12:], ad)
	if err != nil {
		return nil, keys.ErrUnwrap
	}
	return dk, nil
}

// TestMoveOffUnfitKey: data keys wrapped under an extractable KEK (as the
// provider allowed before) are not stranded by the refusal: the unfit key
// opens with InsecureUnwrapOnly, wraps nothing, and RotateKEK moves every
// data key under a fit key under another label, after which the data reads
// with the fit key alone and the read-out value opens no wrapped key.
func TestMoveOffUnfitKey(t *testing.T) {
	ctx := context.Background()
	o := token(t)
	o.CreateKey = false
	r := rawSession(t, o)
	k := goodKey(o.KeyLabel)
	k[p11.CKA_EXTRACTABLE], k[p11.CKA_SENSITIVE] = true, false
	h := r.generate(t, p11.CKM_AES_KEY_GEN, k)
	stolen := gcmProvider{id: "pkcs11:" + o.TokenLabel + "/" + o.KeyLabel, key: r.value(t, h), ads: new([][]byte)}

	// Before: the subjects' data keys wrapped under the unfit key.
	master := testkeys.Encrypting(t)
	table := memkeys.New()
	subjects := keys.Subjects{ThreadSeparator: ":"}
	data := filepath.Join(t.TempDir(), "data.db")
	h1, err := keys.New(keys.Options{Master: master, Table: table, Subjects: subjects, Providers: []keys.Provider{stolen}})
	must(t, err)
	s, err := sqlitesaver.Open(ctx, data, sqlitesaver.Options{Serde: h1})
	must(t, err)
	for i := range 3 {
		put(t, s, fmt.Sprintf("patient%d:visit", i), fmt.Sprintf("record %d", i))
	}
	must(t, s.Close())

	_, err = pkcs11.Open(o)
	if !errors.Is(err, pkcs11.ErrUnfitKey) {
		t.Fatalf("unfit key: %v", err)
	}
	for _, leak := range []string{string(stolen.key), hex.EncodeToString(stolen.key)} {
		if strings.Contains(err.Error(), leak) {
			t.Fatal("the error holds the key's value")
		}
	}
	o.InsecureUnwrapOnly = true
	old := open(t, o)
	if _, err := old.Wrap(ctx, make([]byte, 32), nil); !errors.Is(err, pkcs11.ErrUnwrapOnly) {
		t.Fatalf("wrap with an unwrap-only key: %v", err)
	}
	fit := o
	fit.InsecureUnwrapOnly, fit.CreateKey, fit.KeyLabel = false, true, "memvault-kek-2"
	hsm := open(t, fit)
	h2, err := keys.New(keys.Options{Master: master, Table: table, Subjects: subjects, Providers: []keys.Provider{hsm, old}})
	must(t, err)
	st, err := h2.RotateKEK(ctx, nil)
	must(t, err)
	if st.Rewrapped != 3 {
		t.Fatalf("rotation %+v", st)
	}

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
	// The read-out value opened the wrapped keys before the move, and
	// opens none after it.
	if len(*stolen.ads) != 3 {
		t.Fatalf("%d keys wrapped", len(*stolen.ads))
	}
	for i := range 3 {
		ks, err := table.Keys(ctx, fmt.Sprintf("patient%d", i))
		must(t, err)
		if len(ks) != 1 || ks[0].KEK != hsm.KEKID() {
			t.Fatalf("patient %d: %+v", i, ks)
		}
		for _, ad := range *stolen.ads {
			if _, err := stolen.Unwrap(ctx, ks[0].Wrapped, ad); err == nil {
				t.Fatalf("patient %d: the read-out value still unwraps the data key", i)
			}
		}
	}
}

// TestTwoProviders: two Providers on one module — a fit key and an unfit
// one opened for unwrapping while RotateKEK moves keys between them — are
// independent, even when they name the module differently: closing one
// neither finalizes the module nor logs the token out under the other.
func TestTwoProviders(t *testing.T) {
	ctx := context.Background()
	o := token(t)
	a := open(t, o)
	o.KeyLabel = "memvault-kek-2"
	// The same library under its other name (Debian's module path is a
	// symbolic link).
	if real, err := filepath.EvalSymlinks(o.Module); err == nil {
		o.Module = real
	}
	b := open(t, o)
	dk := bytes.Repeat([]byte{5}, 32)
	w, err := b.Wrap(ctx, dk, []byte("ad"))
	must(t, err)
	must(t, a.Close())
	if got, err := b.Unwrap(ctx, w, []byte("ad")); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap after closing the other provider: %v", err)
	}
	if _, err := b.Wrap(ctx, dk, []byte("ad")); err != nil {
		t.Fatalf("wrap after closing the other provider: %v", err)
	}
	must(t, b.Close())
	// The last Close finalized the module: it opens afresh.
	open(t, o)
}
