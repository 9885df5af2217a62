package pkcs11

import (
	"errors"
	"fmt"
	"path/filepath"
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

// moduleKey names a module by its resolved path: two names of one library
// (a symbolic link, such as Debian's /usr/lib/softhsm/libsofthsm2.so) load
// the same library, with one initialization.
func moduleKey(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}

// acquire loads and initializes the module at path, or takes another
// reference to it.
func acquire(path string) (*p11.Ctx, error) {
	key := moduleKey(path)
	modules.Lock()
	defer modules.Unlock()
	if m := modules.m[key]; m != nil {
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
	modules.m[key] = &module{ctx: ctx, refs: 1, owned: owned}
	return ctx, nil
}

// release drops a reference taken by acquire; the last one finalizes the
// module (when we initialized it) and unloads it.
func release(path string) {
	key := moduleKey(path)
	modules.Lock()
	defer modules.Unlock()
	m := modules.m[key]
	if m == nil {
		return
	}
	if m.refs--; m.refs > 0 {
		return
	}
	delete(modules.m, key)
	if m.owned {
		_ = m.ctx.Finalize()
	}
	m.ctx.Destroy()
}
