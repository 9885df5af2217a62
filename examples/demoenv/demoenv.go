package demoenv

import (
	"bytes"
	"strings"
	"testing"

	"context"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/memvaulttest/testkeys"

	"github.com/memvault/memvault/config"
)

// DemoKey encrypts the examples' files when LANGGRAPH_AES_KEY is unset. It
// is public: it only keeps the demo honest about encryption.
const DemoKey = "demo-key-0123456789abcdef0123456"

// Config is config.Default() on the SQLite file at path, with
// LANGGRAPH_AES_KEY or DemoKey as its key.
func Config(path string) config.Config {
	cfg := config.Default()
	cfg.DBPath = path
	cfg.Keys.Primary = os.Getenv("LANGGRAPH_AES_KEY")
	if cfg.Keys.Primary == "" {
		cfg.Keys.Primary = DemoKey
	}
	return cfg
}

// Main runs demo with standard output on MEMVAULT_DB, or on file in a
// temporary directory removed afterwards, and exits with the error, if any.
func Main(file string, demo func(ctx context.Context, w io.Writer, path string) error) {
	path, dir := os.Getenv("MEMVAULT_DB"), ""
	if path == "" {
		var err error
		if dir, err = os.MkdirTemp("", "memvault-example-"); err != nil {
			log.Fatal(err)
		}
		path = filepath.Join(dir, file)
	}
	err := demo(context.Background(), os.Stdout, path)
	if dir != "" {
		os.RemoveAll(dir)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// Check runs demo on a fresh file named file in a test's temporary
// directory, fails t unless the output holds every line of want, and
// checks the database file and its log hold none of secrets (the examples
// always encrypt). A secret must be a phrase that cannot occur by chance:
// one of digits, dots and hex letters only ("1187") is refused, as ids,
// timestamps and channel versions are stored in plaintext and hold such
// runs (the check once failed on "1187" found in one of them).
func Check(t *testing.T, file string, demo func(ctx context.Context, w io.Writer, path string) error, want []string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Trim(s, "0123456789abcdefABCDEF.-") == "" {
			t.Fatalf("secret %q can occur by chance in plaintext ids and versions: give a phrase (\"order %s\")", s, s)
		}
	}
	path := filepath.Join(t.TempDir(), file)
	var out bytes.Buffer
	if err := demo(t.Context(), &out, path); err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Fatalf("output lacks %q:\n%s", w, out.String())
		}
	}
	testkeys.NoPlaintext(t, []string{path, path + "-wal"}, secrets...)
}
