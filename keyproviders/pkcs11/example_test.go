package pkcs11_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/memvault/memvault/keyproviders/pkcs11"
)

// A KEK inside a SoftHSM2 token wraps a data key; only the token can
// unwrap it. (The example makes a throwaway token first, as an operator
// would with softhsm2-util or the HSM's own tools.)
func Example() {
	dir, _ := os.MkdirTemp("", "softhsm")
	defer os.RemoveAll(dir)
	_ = os.MkdirAll(filepath.Join(dir, "tokens"), 0o700)
	conf := filepath.Join(dir, "softhsm2.conf")
	_ = os.WriteFile(conf, []byte("directories.tokendir = "+filepath.Join(dir, "tokens")+"\n"), 0o600)
	old, had := os.LookupEnv("SOFTHSM2_CONF")
	os.Setenv("SOFTHSM2_CONF", conf)
	defer func() {
		if had {
			os.Setenv("SOFTHSM2_CONF", old)
		} else {
			os.Unsetenv("SOFTHSM2_CONF")
		}
	}()
	if out, err := exec.Command("softhsm2-util", "--init-token", "--free", "--label", "agents", "--pin", "1234", "--so-pin", "5678").CombinedOutput(); err != nil {
		fmt.Println(err, string(out))
		return
	}

	p, err := pkcs11.Open(pkcs11.Options{
		Module:     "/usr/lib/softhsm/libsofthsm2.so",
		TokenLabel: "agents", PIN: "1234",
		KeyLabel: "memvault-kek", CreateKey: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	ctx := context.Background()
	dataKey := bytes.Repeat([]byte{42}, 32)
	wrapped, _ := p.Wrap(ctx, dataKey, []byte("carol"))
	back, err := p.Unwrap(ctx, wrapped, []byte("carol"))
	fmt.Println(p.KEKID(), len(wrapped), bytes.Equal(back, dataKey), err)
	// Output: pkcs11:agents/memvault-kek 60 true <nil>
}
