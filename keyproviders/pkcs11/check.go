package pkcs11

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	p11 "github.com/miekg/pkcs11"
)

// ErrUnfitKey is wrapped by Open when the object under the key label is not
// fit to be a KEK. The provider wraps and unwraps with CKM_AES_GCM through
// C_Encrypt and C_Decrypt, so it needs an AES secret key of 32 bytes with
//
//   - CKA_TOKEN true (it outlives the sessions), CKA_PRIVATE true (usable
//     only after logging in);
//   - CKA_SENSITIVE true and CKA_EXTRACTABLE false (the token never
//     reveals it), CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE true
//     (it never did: it was neither imported nor ever extractable);
//   - CKA_ENCRYPT and CKA_DECRYPT true, and CKA_SIGN, CKA_VERIFY,
//     CKA_WRAP, CKA_UNWRAP and CKA_DERIVE false: no use but the one.
//
// Options.CreateKey generates exactly such a key.
var ErrUnfitKey = errors.New("pkcs11: key unfit to be a KEK")

// howToCreate ends every ErrUnfitKey error: how to get a fit key, and how
// to move data keys off the unfit one.
const howToCreate = "memvault needs an AES-256 key generated in the token with CKA_TOKEN, CKA_PRIVATE, " +
	"CKA_SENSITIVE, CKA_ALWAYS_SENSITIVE, CKA_NEVER_EXTRACTABLE, CKA_ENCRYPT and CKA_DECRYPT true and " +
	"CKA_EXTRACTABLE, CKA_SIGN, CKA_VERIFY, CKA_WRAP, CKA_UNWRAP and CKA_DERIVE false: let this provider " +
	"generate it (Options.CreateKey with a KeyLabel no key uses); data keys already wrapped by this key " +
	"move to the new one with keys.Hierarchy.RotateKEK (the new key's provider first, this one after it " +
	"opened with Options.InsecureUnwrapOnly), after which destroy this key"

// restrictable are the uses the provider does not need and that
// Options.RestrictKey may clear: none of them can have revealed the key.
// CKA_DERIVE is not among them: a derivation (CKM_EXTRACT_KEY_FROM_KEY,
// CKM_CONCATENATE_BASE_AND_DATA) can yield an extractable key holding the
// KEK's bits, so a key that had it may already be known.
var restrictable = []struct {
	typ  uint
	name string
}{
	{p11.CKA_SIGN, "CKA_SIGN"},
	{p11.CKA_VERIFY, "CKA_VERIFY"},
	{p11.CKA_WRAP, "CKA_WRAP"},
	{p11.CKA_UNWRAP, "CKA_UNWRAP"},
}

// flag is a boolean attribute that checkKey requires to have one value.
type flag struct {
	typ  uint
	name string
	want bool
	why  string // said when the attribute has the other value
}

var required = []flag{
	{p11.CKA_TOKEN, "CKA_TOKEN", true, "a session object, gone with its session"},
	{p11.CKA_PRIVATE, "CKA_PRIVATE", true, "usable without logging in"},
	{p11.CKA_SENSITIVE, "CKA_SENSITIVE", true, "the token reveals its value"},
	{p11.CKA_EXTRACTABLE, "CKA_EXTRACTABLE", false, "it can be wrapped out of the token"},
	{p11.CKA_ALWAYS_SENSITIVE, "CKA_ALWAYS_SENSITIVE", true, "its value was readable once, or was imported"},
	{p11.CKA_NEVER_EXTRACTABLE, "CKA_NEVER_EXTRACTABLE", true, "it was extractable once, or was imported"},
	{p11.CKA_DERIVE, "CKA_DERIVE", false, "a derivation can expose its value"},
	{p11.CKA_ENCRYPT, "CKA_ENCRYPT", true, "the provider wraps with C_Encrypt"},
	{p11.CKA_DECRYPT, "CKA_DECRYPT", true, "the provider unwraps with C_Decrypt"},
}

// checkKey refuses a key unfit to be a KEK (see ErrUnfitKey), or, with
// opts.RestrictKey, clears the uses it does not need when that is all
// that is wrong. It reads attributes only, never the key's value.
func checkKey(ctx *p11.Ctx, s p11.SessionHandle, key p11.ObjectHandle, opts Options) error {
	unfit := func(problems []string, remedy string) error {
		return fmt.Errorf("%w: key %q in token %q: %s. %s", ErrUnfitKey, opts.KeyLabel, opts.TokenLabel, strings.Join(problems, "; "), remedy)
	}
	// The key type first: the other attributes differ by type (a DES key
	// has no CKA_VALUE_LEN).
	kt, err := ctx.GetAttributeValue(s, key, []*p11.Attribute{p11.NewAttribute(p11.CKA_KEY_TYPE, nil)})
	if err != nil || len(kt) != 1 {
		return fmt.Errorf("pkcs11: read the type of key %q: %w", opts.KeyLabel, err)
	}
	if t, ok := ulong(kt[0].Value); !ok || t != p11.CKK_AES {
		return unfit([]string{"a " + keyTypeName(kt[0].Value) + " key, not AES"}, howToCreate)
	}
	tmpl := []*p11.Attribute{p11.NewAttribute(p11.CKA_VALUE_LEN, nil)}
	for _, f := range required {
		tmpl = append(tmpl, p11.NewAttribute(f.typ, nil))
	}
	for _, r := range restrictable {
		tmpl = append(tmpl, p11.NewAttribute(r.typ, nil))
	}
	attrs, err := ctx.GetAttributeValue(s, key, tmpl)
	if err != nil {
		return fmt.Errorf("pkcs11: read the attributes of key %q: %w", opts.KeyLabel, err)
	}
	got := make(map[uint][]byte, len(attrs))
	for _, a := range attrs {
		got[a.Type] = a.Value
	}
	var problems, extra []string
	if n, ok := ulong(got[p11.CKA_VALUE_LEN]); !ok || n != 32 {
		problems = append(problems, fmt.Sprintf("%d bytes long, not 32 (AES-256)", n))
	}
	for _, f := range required {
		if v, ok := boolean(got[f.typ]); !ok || v != f.want {
			problems = append(problems, fmt.Sprintf("%s is %v: %s", f.name, !f.want, f.why))
		}
	}
	for _, r := range restrictable {
		if v, ok := boolean(got[r.typ]); !ok || v {
			extra = append(extra, r.name)
		}
	}
	if len(extra) > 0 {
		use := strings.Join(extra, ", ") + " true: a use the provider does not need (it calls only C_Encrypt and C_Decrypt)"
		if len(problems) > 0 {
			return unfit(append(problems, use), howToCreate)
		}
		if !opts.RestrictKey {
			return unfit([]string{use}, "The key is fit otherwise: set Options.RestrictKey to clear these uses (the object must be modifiable), or "+howToCreate)
		}
		off := make([]*p11.Attribute, 0, len(extra))
		for _, r := range restrictable {
			if v, ok := boolean(got[r.typ]); !ok || v {
				off = append(off, p11.NewAttribute(r.typ, false))
			}
		}
		if err := ctx.SetAttributeValue(s, key, off); err != nil {
			return fmt.Errorf("%w: key %q in token %q: RestrictKey could not clear %s: %w. %s", ErrUnfitKey, opts.KeyLabel, opts.TokenLabel, strings.Join(extra, ", "), err, howToCreate)
		}
		opts.RestrictKey = false
		return checkKey(ctx, s, key, opts)
	}
	if len(problems) > 0 {
		return unfit(problems, howToCreate)
	}
	return nil
}

// boolean decodes a CK_BBOOL attribute value.
func boolean(v []byte) (bool, bool) {
	if len(v) != 1 {
		return false, false
	}
	return v[0] != 0, true
}

// ulong decodes a CK_ULONG attribute value (native byte order, the
// platform's unsigned long).
func ulong(v []byte) (uint64, bool) {
	switch len(v) {
	case 8:
		return binary.NativeEndian.Uint64(v), true
	case 4:
		return uint64(binary.NativeEndian.Uint32(v)), true
	}
	return 0, false
}

func keyTypeName(v []byte) string {
	t, ok := ulong(v)
	if !ok {
		return "unknown type of"
	}
	switch t {
	case p11.CKK_GENERIC_SECRET:
		return "generic secret"
	case p11.CKK_DES:
		return "DES"
	case p11.CKK_DES2:
		return "DES2"
	case p11.CKK_DES3:
		return "DES3"
	}
	return fmt.Sprintf("type 0x%x", t)
}
