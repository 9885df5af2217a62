//go:build unix

package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// fakeServer makes root/<version>/bin look like a server installation of
// that version, with pgvector when vector is set, and returns its bin dir.
func fakeServer(t *testing.T, root, version string, vector bool) string {
	t.Helper()
	bin := filepath.Join(root, version, "bin")
	share := filepath.Join(root, version, "share")
	if err := os.MkdirAll(filepath.Join(share, "extension"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"initdb":    "exit 1",
		"pg_ctl":    "echo 'pg_ctl (PostgreSQL) " + version + "'",
		"pg_config": "echo '" + share + "'",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if vector {
		if err := os.WriteFile(filepath.Join(share, "extension", "vector.control"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// withSearch points findBinDir at root/*/bin only.
func withSearch(t *testing.T, root string) {
	t.Setenv("PATH", filepath.Join(root, "nothing-here"))
	t.Setenv(EnvBinDir, "")
	saved := binDirPatterns
	binDirPatterns = []string{filepath.Join(root, "*", "bin")}
	t.Cleanup(func() { binDirPatterns = saved })
}

func TestFindBinDir(t *testing.T) {
	root := t.TempDir()
	withSearch(t, root)
	if _, err := findBinDir(); err == nil || !strings.Contains(err.Error(), "scripts/install-deps.sh") {
		t.Fatalf("no binaries: err = %v, want a hint to run scripts/install-deps.sh", err)
	}

	fakeServer(t, root, "9.6.24", false)
	v16 := fakeServer(t, root, "16.4", false)
	if got, err := findBinDir(); err != nil || got != v16 {
		t.Fatalf("without pgvector: findBinDir() = %q, %v; want the newest, %q", got, err, v16)
	}
	v15 := fakeServer(t, root, "15.20", true)
	fakeServer(t, root, "14.1", true)
	if got, err := findBinDir(); err != nil || got != v15 {
		t.Fatalf("findBinDir() = %q, %v; want the newest with pgvector, %q", got, err, v15)
	}

	t.Setenv(EnvBinDir, v16)
	if got, err := findBinDir(); err != nil || got != v16 {
		t.Fatalf("with %s: findBinDir() = %q, %v; want %q", EnvBinDir, got, err, v16)
	}
	t.Setenv(EnvBinDir, root)
	if _, err := findBinDir(); err == nil || !strings.Contains(err.Error(), "scripts/install-deps.sh") {
		t.Fatalf("%s without binaries: err = %v, want a hint", EnvBinDir, err)
	}
}

func TestSweep(t *testing.T) {
	base := t.TempDir()
	mk := func(owner string) string {
		dir, err := os.MkdirTemp(base, dirPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	mine := mk(fmt.Sprint(os.Getpid()))
	noOwner := mk("")
	dead := mk(fmt.Sprint(deadPid(t)))
	other, err := os.MkdirTemp(base, "something-else-")
	if err != nil {
		t.Fatal(err)
	}
	sweep(context.Background(), base, "/bin/false", nil)
	for dir, wantKept := range map[string]bool{mine: true, noOwner: true, dead: false, other: true} {
		_, err := os.Stat(dir)
		if kept := err == nil; kept != wantKept {
			t.Errorf("%s: kept = %v, want %v", filepath.Base(dir), kept, wantKept)
		}
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

func TestPrepareNeedsMain(t *testing.T) {
	mu.Lock()
	saved := mainCalled.Load()
	mainCalled.Store(false)
	e := prepare()
	mainCalled.Store(saved)
	mu.Unlock()
	if e.err == nil || !strings.Contains(e.err.Error(), "pgtest.Main") {
		t.Fatalf("prepare without Main: err = %v, want one naming pgtest.Main", e.err)
	}
}

func TestMissingExtension(t *testing.T) {
	e := database(t)
	err := createExtension(context.Background(), e.admin, "pgtest_no_such_extension", "here")
	if err == nil || !strings.Contains(err.Error(), "scripts/install-deps.sh") {
		t.Fatalf("err = %v, want a hint to run scripts/install-deps.sh", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("err = %v does not wrap the server's error", err)
	}
}
