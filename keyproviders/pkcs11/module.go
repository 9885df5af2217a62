package pkcs11

import (
	"errors"
	"fmt"
	"sync"

	p11 "github.com/miekg/pkcs11"
)

// modules shares one loaded module among the Providers of a process.
// C_Initialize and C_Finalize act on the whole process, and a login on
// every session the process has with the token: a Provider that finalized
// or logged out on Close would break every other Provider on the same
// module — such as the unfit key opened with InsecureUnwrapOnly beside its
// replacement while RotateKEK runs.
var modules = struct {
	sync.Mutex
	m map[string]*module
}{m: map[string]*module{}}

type module struct {
	ctx  *p11.Ctx
	refs int
	// owned is whether we initialized it; a module that some other code of
	// the process initialized is left initialized for it.
	owned bool
}

// acquire loads and initializes the module at path, or takes another
// reference to it.
func acquire(path string) (*p11.Ctx, error) {
	modules.Lock()
	defer modules.Unlock()
	if m := modules.m[path]; m != nil {
		m.refs++
		return m.ctx, nil
	}
	ctx := p11.New(path)
	if ctx == nil {
		return nil, fmt.Errorf("pkcs11: cannot load module %q", path)
	}
	owned := true
	if err := ctx.Initialize(); err != nil {
		if !errors.Is(err, p11.Error(p11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
			ctx.Destroy()
			return nil, fmt.Errorf("pkcs11: initialize %q: %w", path, err)
		}
		owned = false
	}
	modules.m[path] = &module{ctx: ctx, refs: 1, owned: owned}
	return ctx, nil
}

// release drops a reference taken by acquire; the last one finalizes the
// module (when we initialized it) and unloads it.
func release(path string) {
	modules.Lock()
	defer modules.Unlock()
	m := modules.m[path]
	if m == nil {
		return
	}
	if m.refs--; m.refs > 0 {
		return
	}
	delete(modules.m, path)
	if m.owned {
		_ = m.ctx.Finalize()
	}
	m.ctx.Destroy()
}
