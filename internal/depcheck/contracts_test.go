package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/memvault/memvault"

// deps returns, for every package the go list patterns match (tests left
// out), the import paths it depends on, directly or not.
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	cmd := exec.Command(goCmd, append([]string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, patterns...)...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", patterns, err, msg)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	if len(m) == 0 {
		t.Fatalf("go list %v matched nothing", patterns)
	}
	return m
}

// under reports whether import path p is root or below it.
func under(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// forbid fails t for every package of patterns that depends on a path
// under one of the roots.
func forbid(t *testing.T, why string, patterns []string, roots ...string) {
	t.Helper()
	for pkg, ds := range deps(t, patterns...) {
		for _, d := range ds {
			for _, r := range roots {
				if under(d, r) {
					t.Errorf("%s depends on %s: %s", pkg, d, why)
				}
			}
		}
	}
}

// TestContractsStayApart: the two contracts are independent; what both
// need (re-encryption options and stats) lives below both, in package
// reencrypt.
func TestContractsStayApart(t *testing.T) {
	forbid(t, "the store contract must not import the checkpointer's", []string{"./store/..."}, mod+"/checkpointer")
	forbid(t, "the checkpointer contract must not import the store's", []string{"./checkpointer/..."}, mod+"/store")
}

// TestContractsImportNoDatabaseDriver: the contract packages and their
// cores are storage-neutral; pgx, pgvector and the SQLite driver stay in
// the driver packages (checkpointer/pgsaver, store/sqlitestore, …).
func TestContractsImportNoDatabaseDriver(t *testing.T) {
	forbid(t, "a contract or its core must not import a database driver",
		[]string{"./checkpointer", "./checkpointer/internal/...", "./store", "./store/internal/...", "./reencrypt"},
		"github.com/jackc/pgx", "github.com/pgvector/pgvector-go", "modernc.org/sqlite")
}

// TestRotateImportsNoContract: internal/rotate is below both contracts
// (their drivers use it), so it imports neither.
func TestRotateImportsNoContract(t *testing.T) {
	forbid(t, "internal/rotate is below the contracts", []string{"./internal/rotate"}, mod+"/checkpointer", mod+"/store")
}
