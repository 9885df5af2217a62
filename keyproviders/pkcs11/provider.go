package pkcs11

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	p11 "github.com/miekg/pkcs11"

	"github.com/memvault/memvault/keys"
)

// Options names the module, token and key.
type Options struct {
	// Module is the PKCS#11 library, such as
	// /usr/lib/softhsm/libsofthsm2.so.
	Module string
	// TokenLabel selects the token; PIN is its user PIN.
	TokenLabel, PIN string
	// KeyLabel names the AES key in the token.
	KeyLabel string
	// CreateKey generates the key (AES-256, sensitive, not extractable,
	// for encrypt and decrypt only) when the token has none of that label.
	CreateKey bool
	// RestrictKey clears the uses the provider does not need (CKA_SIGN,
	// CKA_VERIFY, CKA_WRAP, CKA_UNWRAP) on an existing key that is
	// otherwise fit, instead of refusing it. It only ever removes a use,
	// and needs the object to be modifiable. Keys this provider generated
	// before it set those attributes itself carry SoftHSM2's defaults
	// (CKA_SIGN and CKA_VERIFY true): set RestrictKey once to keep them.
	RestrictKey bool
	// InsecureUnwrapOnly opens a key that fails the checks of Open (see
	// ErrUnfitKey) for unwrapping only: Wrap refuses. It exists to move
	// the data keys off such a key: open a fit key under another label as
	// the first provider, this one after it, run `memvault keys
	// rotate-kek` (keys.Hierarchy.RotateKEK), then destroy the unfit key.
	// Until then whoever read the unfit key's value can unwrap every data
	// key it wrapped.
	InsecureUnwrapOnly bool
	// Sessions bounds the sessions opened on the token (operations run
	// one per session); 0 means 4.
	Sessions int
}

// Provider wraps data keys with an AES key held in a PKCS#11 token. It is
// safe for concurrent use. Close it when done.
type Provider struct {
	mu       sync.RWMutex // held for reading by operations, for writing by Close
	closed   bool
	ctx      *p11.Ctx
	module   string // the path acquire loaded ctx from
	key      p11.ObjectHandle
	sessions chan p11.SessionHandle
	id       string
	// unwrapOnly is Options.InsecureUnwrapOnly: Wrap refuses.
	unwrapOnly bool
}

var _ keys.Provider = (*Provider)(nil)

const (
	ivSize  = 12
	tagBits = 128
)

// Open loads the module, logs in to the token and finds (or creates) the
// key.
func Open(opts Options) (_ *Provider, err error) {
	if opts.Module == "" || opts.TokenLabel == "" || opts.KeyLabel == "" {
		return nil, errors.New("pkcs11: Module, TokenLabel and KeyLabel are required")
	}
	if opts.Sessions < 0 {
		return nil, fmt.Errorf("pkcs11: negative Sessions %d", opts.Sessions)
	}
	if opts.Sessions == 0 {
		opts.Sessions = 4
	}
	ctx, err := acquire(opts.Module)
	if err != nil {
		return nil, err
	}
	p := &Provider{ctx: ctx, module: opts.Module, sessions: make(chan p11.SessionHandle, opts.Sessions), id: "pkcs11:" + opts.TokenLabel + "/" + opts.KeyLabel, unwrapOnly: opts.InsecureUnwrapOnly}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	slot, err := findSlot(ctx, opts.TokenLabel)
	if err != nil {
		return nil, err
	}
	for i := range opts.Sessions {
		s, err := ctx.OpenSession(slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
		if err != nil {
			return nil, fmt.Errorf("pkcs11: open session: %w", err)
		}
		if i == 0 {
			// Login applies to every session of the application.
			if err := ctx.Login(s, p11.CKU_USER, opts.PIN); err != nil && !errors.Is(err, p11.Error(p11.CKR_USER_ALREADY_LOGGED_IN)) {
				ctx.CloseSession(s)
				return nil, fmt.Errorf("pkcs11: login to token %q: %w", opts.TokenLabel, err)
			}
		}
		p.sessions <- s
	}
	s := <-p.sessions
	defer func() { p.sessions <- s }()
	if p.key, err = findKey(ctx, s, opts.KeyLabel); err != nil {
		if !opts.CreateKey || !errors.Is(err, errNoKey) {
			return nil, err
		}
		if p.key, err = createKey(ctx, s, opts.KeyLabel); err != nil {
			return nil, err
		}
	}
	// A key made by anyone but this provider may have been made for
	// another purpose; even ours is checked, in case a token ignored part
	// of the template.
	if err := checkKey(ctx, s, p.key, opts); err != nil && !opts.InsecureUnwrapOnly {
		return nil, err
	}
	return p, nil
}

func findSlot(ctx *p11.Ctx, label string) (uint, error) {
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		return 0, fmt.Errorf("pkcs11: list slots: %w", err)
	}
	for _, s := range slots {
		ti, err := ctx.GetTokenInfo(s)
		if err == nil && ti.Label == label {
			return s, nil
		}
	}
	return 0, fmt.Errorf("pkcs11: no token labelled %q", label)
}

var errNoKey = errors.New("pkcs11: no such key")

// findKey finds the one secret key labelled label, of any key type: a key
// of the wrong type is refused by checkKey rather than passed over, so
// CreateKey never adds a second key under a label that is taken.
func findKey(ctx *p11.Ctx, s p11.SessionHandle, label string) (p11.ObjectHandle, error) {
	tmpl := []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_SECRET_KEY),
		p11.NewAttribute(p11.CKA_LABEL, label),
	}
	if err := ctx.FindObjectsInit(s, tmpl); err != nil {
		return 0, fmt.Errorf("pkcs11: find key %q: %w", label, err)
	}
	objs, _, err := ctx.FindObjects(s, 2)
	if ferr := ctx.FindObjectsFinal(s); err == nil {
		err = ferr
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("pkcs11: find key %q: %w", label, err)
	case len(objs) == 0:
		return 0, fmt.Errorf("%w: %q", errNoKey, label)
	case len(objs) > 1:
		return 0, fmt.Errorf("pkcs11: several secret keys labelled %q", label)
	}
	return objs[0], nil
}

func createKey(ctx *p11.Ctx, s p11.SessionHandle, label string) (p11.ObjectHandle, error) {
	tmpl := []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_SECRET_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, p11.CKK_AES),
		p11.NewAttribute(p11.CKA_VALUE_LEN, 32),
		p11.NewAttribute(p11.CKA_LABEL, label),
		p11.NewAttribute(p11.CKA_TOKEN, true),
		p11.NewAttribute(p11.CKA_PRIVATE, true),
		p11.NewAttribute(p11.CKA_SENSITIVE, true),
		p11.NewAttribute(p11.CKA_EXTRACTABLE, false),
		p11.NewAttribute(p11.CKA_ENCRYPT, true),
		p11.NewAttribute(p11.CKA_DECRYPT, true),
		// Stated, not left to the token: SoftHSM2 defaults CKA_SIGN and
		// CKA_VERIFY to true.
		p11.NewAttribute(p11.CKA_SIGN, false),
		p11.NewAttribute(p11.CKA_VERIFY, false),
		p11.NewAttribute(p11.CKA_WRAP, false),
		p11.NewAttribute(p11.CKA_UNWRAP, false),
		p11.NewAttribute(p11.CKA_DERIVE, false),
	}
	k, err := ctx.GenerateKey(s, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_KEY_GEN, nil)}, tmpl)
	if err != nil {
		return 0, fmt.Errorf("pkcs11: generate key %q: %w", label, err)
	}
	return k, nil
}

// KEKID implements keys.Provider: "pkcs11:<token label>/<key label>".
func (p *Provider) KEKID() string { return p.id }

// ErrClosed is returned by operations on a closed Provider.
var ErrClosed = errors.New("pkcs11: provider closed")

// session takes a session from the pool, waiting for one while ctx lasts;
// the caller holds p.mu for reading.
func (p *Provider) session(ctx context.Context) (p11.SessionHandle, error) {
	if p.closed {
		return 0, ErrClosed
	}
	select {
	case s := <-p.sessions:
		return s, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ErrUnwrapOnly is returned by Wrap on a Provider opened with
// Options.InsecureUnwrapOnly.
var ErrUnwrapOnly = errors.New("pkcs11: key opened for unwrapping only (InsecureUnwrapOnly)")

// Wrap implements keys.Provider: AES-GCM in the token with a random
// 12-byte IV (stored before the ciphertext) and ad as associated data.
func (p *Provider) Wrap(ctx context.Context, dataKey, ad []byte) ([]byte, error) {
	if p.unwrapOnly {
		return nil, ErrUnwrapOnly
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	s, err := p.session(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { p.sessions <- s }()
	iv := make([]byte, ivSize)
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("pkcs11: iv: %w", err)
	}
	params := p11.NewGCMParams(iv, ad, tagBits)
	defer params.Free()
	if err := p.ctx.EncryptInit(s, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_GCM, params)}, p.key); err != nil {
		return nil, fmt.Errorf("pkcs11: wrap: %w", err)
	}
	ct, err := p.ctx.Encrypt(s, dataKey)
	if err != nil {
		return nil, fmt.Errorf("pkcs11: wrap: %w", err)
	}
	return append(iv, ct...), nil
}

// Unwrap implements keys.Provider; any failure is keys.ErrUnwrap.
func (p *Provider) Unwrap(ctx context.Context, wrapped, ad []byte) ([]byte, error) {
	if len(wrapped) < ivSize+tagBits/8 {
		return nil, keys.ErrUnwrap
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	s, err := p.session(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { p.sessions <- s }()
	params := p11.NewGCMParams(append([]byte(nil), wrapped[:ivSize]...), ad, tagBits)
	defer params.Free()
	if err := p.ctx.DecryptInit(s, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_GCM, params)}, p.key); err != nil {
		return nil, keys.ErrUnwrap
	}
	dk, err := p.ctx.Decrypt(s, wrapped[ivSize:])
	if err != nil {
		return nil, keys.ErrUnwrap
	}
	return dk, nil
}

// Close waits for operations under way, then closes the sessions and
// releases the module: the last Provider of the process on it finalizes
// and unloads it. Closing the process's last session with the token logs
// it out; Close does not log out itself, which would log out every other
// Provider on the token.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.ctx == nil {
		return nil
	}
	p.closed = true
	close(p.sessions)
	for s := range p.sessions {
		_ = p.ctx.CloseSession(s)
	}
	release(p.module)
	p.ctx = nil
	return nil
}
